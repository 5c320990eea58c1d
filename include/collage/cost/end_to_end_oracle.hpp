#pragma once

/// \file
/// EndToEndOracle: costs a whole partitioned graph (the fitness of evolutionary_refinement), with
/// make_end_to_end_oracle over a callable.

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/result.hpp"

#if defined(__cpp_exceptions)
#include <exception>
#endif

namespace collage {

// What the searchers return (search/partitioning.hpp; the search layer builds on this one): an
// oracle only receives it by reference.
struct Partitioning;

/// Costs a whole partitioned graph (e.g. by compiling and timing it end to end), so that
/// non-additive effects between parts are captured. The fitness of evolutionary_refinement().
///
/// Answers: a known Cost (lower is better); Unknown (ranked below every known answer, never
/// preferred to a known start); Invalid or an Error (the partitioning is discarded).
template <class G>
class EndToEndOracle {
 public:
  virtual ~EndToEndOracle() = default;

  /// The cost of running `graph` partitioned as `partitioning` (a valid, acyclic partitioning
  /// whose parts are in a topological order of the quotient).
  virtual Result<Cost> evaluate(const DataflowGraph<G>& graph, const Partitioning& partitioning) = 0;

  /// A short name for reports and error messages.
  virtual std::string name() const { return "end-to-end oracle"; }

 protected:
  EndToEndOracle() = default;
  EndToEndOracle(const EndToEndOracle&) = default;
  EndToEndOracle& operator=(const EndToEndOracle&) = default;
};

namespace detail {

template <class F, class G>
using end_to_end_callable_result_t =
    std::decay_t<std::invoke_result_t<F&, const DataflowGraph<G>&, const Partitioning&>>;

/// make_end_to_end_oracle's oracle over a callable.
template <class G, class F>
class FunctionEndToEndOracle final : public EndToEndOracle<G> {
 public:
  FunctionEndToEndOracle(std::string name, F f) : name_(std::move(name)), f_(std::move(f)) {}
  Result<Cost> evaluate(const DataflowGraph<G>& graph, const Partitioning& partitioning) override {
    return f_(graph, partitioning);
  }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  F f_;
};

/// Calls the oracle, turning an exception (when exceptions are enabled) into an Error.
template <class G>
Result<Cost> guarded_evaluate(EndToEndOracle<G>& oracle, const DataflowGraph<G>& graph, const Partitioning& p) {
#if defined(__cpp_exceptions)
  try {
    return oracle.evaluate(graph, p);
  } catch (const std::exception& e) {
    return Error{ErrorCode::oracle, "end-to-end oracle '" + oracle.name() + "' threw: " + e.what()};
  } catch (...) {
    return Error{ErrorCode::oracle, "end-to-end oracle '" + oracle.name() + "' threw a non-standard exception"};
  }
#else
  return oracle.evaluate(graph, p);
#endif
}

}  // namespace detail

/// An end-to-end oracle named `name` over a callable `f(const DataflowGraph<G>&, const
/// Partitioning&)` returning Cost or Result<Cost>. The oracle owns `f`; the caller owns the oracle.
template <class G, class F>
std::unique_ptr<EndToEndOracle<G>> make_end_to_end_oracle(std::string name, F f) {
  static_assert(std::is_invocable_v<F&, const DataflowGraph<G>&, const Partitioning&>,
                "make_end_to_end_oracle<G>(name, f): f must be callable as f(const DataflowGraph<G>&, const "
                "Partitioning&)");
  using R = detail::end_to_end_callable_result_t<F, G>;
  static_assert(std::is_same_v<R, Cost> || std::is_same_v<R, Result<Cost>>,
                "make_end_to_end_oracle<G>(name, f): f must return Cost or Result<Cost>");
  return std::make_unique<detail::FunctionEndToEndOracle<G, F>>(std::move(name), std::move(f));
}

}  // namespace collage
