// docs/guide.md, "Choosing a searcher": exact, beam and greedy through PartitionerOptions, what each
// does when it cannot finish, the uncovered-node error, moves between devices, and refinement by an
// end-to-end oracle.
#include "net_ir.hpp"

#include <collage/collage.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

int main() {
  // Two branches from x, joined: dense -> add -> relu on one, tanh on the other, add at the end.
  Net net{{{"input", {}},
           {"const", {}},
           {"dense", {0, 1}},
           {"const", {}},
           {"add", {2, 3}},
           {"relu", {4}},
           {"tanh", {0}},
           {"add", {5, 6}},
           {"dense", {7, 1}}},
          {8}};
  auto graph = Graph::build(net);
  if (!graph) return std::fprintf(stderr, "%s\n", graph.error().message.c_str()), 1;

  // "lib" runs any operator, and is cheap for one operator but dear for large regions; native
  // fusion costs 1 per kernel plus a little per operator.
  auto any_op = [](const Graph& g, std::size_t i) { return g.needs_kernel(i); };
  std::vector<collage::PartitionSpec<Net>> specs = {
      {"lib", collage::op_predicate_byoc_rule<Net>("lib", any_op, 2)},
      collage::native_fusion_spec<Net>("native", 3, /*penalty=*/0.1)};
  auto oracle = collage::make_oracle<Net>(
      "model", [](const Graph& g, const collage::Candidate& c, const collage::ExtractedFunction& fn) {
        double ops = 0;
        for (std::size_t i : fn.body) ops += g.needs_kernel(i) ? 1 : 0;
        if (c.target == "lib") return std::pow(ops, 1.5) * 0.6;
        return 1.0 + 0.1 * ops;
      });

  // [searchers]
  collage::PartitionerOptions options;  // exact search by default
  auto exact = collage::partition(*graph, specs, *oracle, options);
  options.algorithm = collage::SearchAlgorithm::beam;
  options.beam.width = 4;
  auto beam = collage::partition(*graph, specs, *oracle, options);
  options.algorithm = collage::SearchAlgorithm::greedy;  // spec order is the priority
  auto greedy = collage::partition(*graph, specs, *oracle, options);
  for (const auto* r : {&exact, &beam, &greedy}) {
    if (!*r) return std::fprintf(stderr, "%s\n", r->error().message.c_str()), 1;
    const collage::Partitioning& p = (*r)->partitioning;
    std::printf("%-7s total %-5s %zu parts, %zu states expanded\n", p.stats.algorithm.c_str(),
                p.total.to_string().c_str(), p.parts.size(), p.stats.states_expanded);
  }
  // [searchers]
  const collage::Cost best = exact->partitioning.total;
  check(!(beam->partitioning.total < best), "beam is never better than exact");
  check(!(greedy->partitioning.total < best), "greedy is never better than exact");
  check(best < greedy->partitioning.total, "greedy, blind to costs, takes lib's large region");

  // [limits]
  collage::PartitionerOptions tight;
  tight.exact.max_states = 3;  // far too few
  auto fell_back = collage::partition(*graph, specs, *oracle, tight);
  tight.fall_back_to_beam = false;
  auto gave_up = collage::partition(*graph, specs, *oracle, tight);
  if (!gave_up && gave_up.error().code == collage::ErrorCode::search_gave_up) {
    std::printf("%s\n", gave_up.error().message.c_str());
  }
  collage::PartitionerOptions bad;
  bad.algorithm = collage::SearchAlgorithm::beam;
  bad.beam.width = 0;
  auto refused = collage::partition(*graph, specs, *oracle, bad);  // ErrorCode::invalid_argument
  // [limits]
  check(fell_back.ok() && fell_back->partitioning.stats.algorithm == "beam (exact gave up)", "fall back to beam");
  check(!gave_up.ok() && gave_up.error().code == collage::ErrorCode::search_gave_up, "without fallback: gave up");
  check(!refused.ok() && refused.error().code == collage::ErrorCode::invalid_argument, "beam width 0 is refused");
  if (!refused) std::printf("%s\n", refused.error().message.c_str());

  // [uncovered]
  std::vector<collage::PartitionSpec<Net>> dense_only = {
      {"blas", collage::op_predicate<Net>("blas", [](const Graph& g, std::size_t i) { return g.op_name(i) == "dense"; })}};
  auto uncovered = collage::partition(*graph, dense_only, *oracle);
  if (!uncovered) std::printf("%s\n", uncovered.error().message.c_str());
  // [uncovered]
  check(!uncovered.ok() && uncovered.error().code == collage::ErrorCode::uncovered, "add, relu, tanh are uncovered");

  // [transfers]
  // "lib" runs on a device of its own (1); moving a value between it and the host costs 0.4.
  collage::PartitionerOptions placed;
  placed.transfers.device = {{"lib", 1}};
  placed.transfers.cost = [](std::size_t /*node*/, std::size_t /*from*/, std::size_t /*to*/) { return 0.4; };
  auto moved = collage::partition(*graph, specs, *oracle, placed);
  if (!moved) return std::fprintf(stderr, "%s\n", moved.error().message.c_str()), 1;
  for (const auto* r : {&exact, &moved}) {
    const collage::Partitioning& p = (*r)->partitioning;
    std::string parts;
    for (std::size_t k = 0; k < p.parts.size(); ++k) {
      parts += " " + p.parts[k].target + (p.transfers.empty() ? "" : "+" + collage::format_double(p.transfers[k]));
    }
    std::printf("total %s:%s\n", p.total.to_string().c_str(), parts.c_str());
  }
  // [transfers]
  check(exact->partitioning.total < moved->partitioning.total, "moves make the mix dearer");
  check(exact->partitioning.parts[0].target == "lib" && moved->partitioning.parts[0].target == "native",
        "the dense layer stays on the host once moving it costs");
  double transfers = 0;
  for (double t : moved->partitioning.transfers) transfers += t;
  double parts = 0;
  for (const collage::Candidate& part : moved->partitioning.parts) parts += part.cost.raw();
  check(std::abs(moved->partitioning.total.raw() - parts - transfers) < 1e-9, "the total is parts plus transfers");

  // [refine]
  // The whole graph's cost: the parts' own, plus 2 for each value that passes from one target
  // to another (a copy the per-part costs cannot see).
  auto fitness = collage::make_end_to_end_oracle<Net>(
      "with-copies", [](const Graph& g, const collage::Partitioning& p) {
        std::vector<std::string> target_of(g.size());
        for (const collage::Candidate& part : p.parts) {
          for (std::size_t i : part.sub_graph.inside()) target_of[i] = part.target;
        }
        double cost = p.total.raw();
        for (std::size_t i = 0; i < g.size(); ++i) {
          for (std::size_t j : g.outputs(i)) {
            if (!target_of[i].empty() && !target_of[j].empty() && target_of[i] != target_of[j]) cost += 2;
          }
        }
        return collage::Cost::value(cost);
      });
  collage::EvolutionOptions evolution;
  evolution.max_evaluations = 100;
  evolution.seed = 7;
  collage::EvolutionStats stats;
  auto refined = collage::refine(*graph, *exact, *fitness, evolution, &stats);
  if (!refined) return std::fprintf(stderr, "%s\n", refined.error().message.c_str()), 1;
  std::printf("refined: %s -> %s end to end (%zu evaluations, improved: %s); parts' total %s\n",
              stats.start_fitness.to_string().c_str(), stats.best_fitness.to_string().c_str(), stats.evaluations,
              stats.improved ? "yes" : "no", refined->total.to_string().c_str());
  // [refine]
  check(!(stats.start_fitness < stats.best_fitness), "refinement is never worse than its start");
  check(stats.evaluations >= 1 && stats.evaluations <= 100, "within the evaluation budget");
  check(stats.improved && stats.best_fitness < stats.start_fitness, "one target throughout saves the copies");

  if (failures != 0) return 1;
  std::puts("guide search_and_refine: all checks passed");
  return 0;
}
