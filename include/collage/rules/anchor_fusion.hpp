#pragma once

/// \file
/// anchor_fusion: candidates grouped around anchor ops (conv, dense, matmul): vertical (the anchor
/// with prologue and epilogue ops) and horizontal (sibling anchors that share an input, e.g. the
/// q/k/v projections), multi-output allowed.

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collage/rules/base_rules.hpp"
#include "collage/rules/partition_rule.hpp"

namespace collage {

/// What anchor_fusion groups around an anchor.
struct AnchorFusionOptions {
  /// Largest kind of an epilogue op (a consumer chained after the anchor).
  OpKind epilogue_max_kind = OpKind::broadcast;
  /// Most epilogue ops chained after one anchor.
  std::size_t max_epilogue = 3;
  /// Largest kind of a prologue op (a producer of the anchor used by nothing else).
  OpKind prologue_max_kind = OpKind::injective;
  /// Whether to also group sibling anchors that share an input.
  bool horizontal = true;
};

namespace detail {

/// The rule behind anchor_fusion.
template <class G>
class AnchorFusionRule final : public RuleImpl<G> {
 public:
  explicit AnchorFusionRule(AnchorFusionOptions options)
      : options_(options), name_("anchor_fusion"), vertical_(name_ + ".vertical"), horizontal_(name_ + ".horizontal") {}

  std::vector<Candidate> candidates(const DataflowGraph<G>& graph, const Name& target,
                                    const RuleContext&) const override {
    std::vector<Candidate> result;
    auto emit = [&](const IndexSet& inside, const std::string& rule) {
      if (is_convex(graph, inside)) result.push_back(make_candidate(graph, inside, target, rule));
    };
    for (std::size_t a = 0; a < graph.size(); ++a) {
      if (is_anchor(graph, a)) vertical(graph, a, emit);
    }
    if (options_.horizontal) {
      for (std::size_t x = 0; x < graph.size(); ++x) horizontal(graph, x, emit);
    }
    canonicalize(result);
    return result;
  }

  std::string describe() const override {
    return "anchor_fusion(epilogue_max_kind " + std::string(to_string(options_.epilogue_max_kind)) +
           ", max_epilogue " + std::to_string(options_.max_epilogue) + ", prologue_max_kind " +
           std::string(to_string(options_.prologue_max_kind)) + ", horizontal " +
           (options_.horizontal ? "on" : "off") + ")";
  }
  const std::string& name() const override { return name_; }

 private:
  static bool is_anchor(const DataflowGraph<G>& graph, std::size_t i) {
    return graph.kind(i) == OpKind::anchor && graph.needs_kernel(i);
  }
  bool is_epilogue_op(const DataflowGraph<G>& graph, std::size_t i) const {
    return graph.needs_kernel(i) && graph.kind(i) <= options_.epilogue_max_kind;
  }

  /// {a} plus every epilogue chain a -> c1 -> ... -> ck (k <= max_epilogue, each c_{j+1} a consumer
  /// of c_j), each also with all of a's prologue ops. Iterative depth-first walk over consumers in
  /// ascending order.
  template <class Emit>
  void vertical(const DataflowGraph<G>& graph, std::size_t a, Emit& emit) const {
    IndexSet prologue = graph.empty_set();
    for (std::size_t p : graph.inputs(a)) {
      const IndexSpan outs = graph.outputs(p);
      if (graph.needs_kernel(p) && graph.kind(p) <= options_.prologue_max_kind && !graph.is_external(p) &&
          outs.size() == 1 && outs[0] == a) {
        prologue.add(p);
      }
    }
    auto emit_both = [&](const IndexSet& chain) {
      emit(chain, vertical_);
      if (!prologue.empty()) emit(chain | prologue, vertical_);
    };
    struct Frame {
      std::size_t node;
      std::size_t next;  // position in outputs(node) to look at next
    };
    IndexSet chain(graph.size(), {a});
    emit_both(chain);
    std::vector<Frame> stack{{a, 0}};
    while (!stack.empty()) {
      Frame& top = stack.back();
      const IndexSpan outs = graph.outputs(top.node);
      if (stack.size() > options_.max_epilogue || top.next == outs.size()) {
        if (stack.size() > 1) chain.remove(top.node);
        stack.pop_back();
        continue;
      }
      const std::size_t c = outs[top.next++];
      if (!is_epilogue_op(graph, c)) continue;
      chain.add(c);
      emit_both(chain);
      stack.push_back(Frame{c, 0});
    }
  }

  /// The anchor consumers of x grouped by op name: each group of two or more, and, when each member
  /// has exactly one epilogue-kind consumer, the group with those consumers.
  template <class Emit>
  void horizontal(const DataflowGraph<G>& graph, std::size_t x, Emit& emit) const {
    std::map<std::string, std::vector<std::size_t>> groups;  // ordered by name: deterministic
    for (std::size_t o : graph.outputs(x)) {
      if (is_anchor(graph, o)) groups[graph.op_name(o)].push_back(o);
    }
    for (const auto& [op, members] : groups) {
      if (members.size() < 2) continue;
      IndexSet inside = graph.empty_set();
      for (std::size_t m : members) inside.add(m);
      emit(inside, horizontal_);
      bool each_one = true;
      for (std::size_t m : members) {
        std::size_t found = npos;
        std::size_t count = 0;
        for (std::size_t c : graph.outputs(m)) {
          if (is_epilogue_op(graph, c)) {
            found = c;
            ++count;
          }
        }
        if (count != 1) {
          each_one = false;
          break;
        }
        inside.add(found);
      }
      if (each_one) emit(inside, horizontal_);
    }
  }

  AnchorFusionOptions options_;
  Name name_;
  std::string vertical_;
  std::string horizontal_;
};

}  // namespace detail

/// Candidates grouped around anchor ops (nodes of kind anchor that need a kernel). Every candidate
/// is convex; those that are not are dropped. Multi-output candidates are allowed (pair with
/// only_valid to restrict exits).
///
/// Vertical (rule name "anchor_fusion.vertical"), for each anchor a:
///  - {a};
///  - a with an epilogue: every chain a -> c1 -> ... -> ck, 1 <= k <= max_epilogue, where each
///    c_{j+1} is a consumer of c_j (c1 of a) that needs a kernel and has kind <= epilogue_max_kind.
///    Every branch is enumerated; a chain node with other consumers simply becomes an exit;
///  - each of the above together with a's prologue: the producers p of a (one per distinct input)
///    that need a kernel, have kind <= prologue_max_kind, are not results and whose only consumer
///    is a, all of them at once.
///
/// Horizontal (rule name "anchor_fusion.horizontal", when `options.horizontal`), for every node x:
/// the anchor consumers of x grouped by op name; each group of two or more gives a candidate with
/// all of them, and, when each member has exactly one consumer that needs a kernel and has kind <=
/// epilogue_max_kind (other consumers are allowed: the member becomes an exit), another with each
/// member plus that consumer (e.g. dense + bias_add for q, k and v).
///
/// Cost: O(anchors * b^max_epilogue) chains for consumer fan-out b, each built and checked for
/// convexity in O(n) at worst; horizontal groups O(e) plus one check per group.
template <class G>
PartitionRule<G> anchor_fusion(AnchorFusionOptions options = {}) {
  return make_rule<G, detail::AnchorFusionRule<G>>(options);
}

}  // namespace collage
