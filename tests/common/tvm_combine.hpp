#pragma once

// A reference port of TVM Collage's CombinePartitionRule and its combiner rules (Apache TVM
// v0.19.0: src/relay/collage/combiner_rule.cc, partition_rule.cc, candidate_set.cc and the parts of
// sub_graph.cc they use), so tests can check that `combine` proposes at least what TVM proposes.
// Only what decides which inside sets are proposed is ported: TVM's boundary sets, depth and kind
// of a sub-graph, its touching test, its rounds and each combiner's loops, quirks included (marked
// "TVM:" below). Slow (it recomputes reachability for every pair): for small graphs only.

#include <algorithm>
#include <cstddef>
#include <set>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/graph/op_kind.hpp"
#include "collage/support/index_set.hpp"

namespace testing_ir {

template <class G>
class TvmCombine {
 public:
  /// TVM's ByKindSimpleCombinerRule: fires when upstream.kind <= up and downstream.kind <= down.
  struct ByKind {
    collage::OpKind up;
    collage::OpKind down;
  };
  /// Which combiner rules run, as TVM's CombinePartitionRule lists them.
  struct Rules {
    std::vector<ByKind> simple;  // one AllSimpleCombinerRule over these (none when empty)
    bool tuple_arg = false;
    bool tuple_proj = false;
    bool constant = false;
  };

  TvmCombine(const collage::DataflowGraph<G>& graph, Rules rules, std::size_t max_depth)
      : graph_(graph), rules_(std::move(rules)), max_depth_(max_depth) {}

  /// Every inside set TVM proposes from singleton seeds {i} of kind kind(i), in no particular
  /// order.
  std::vector<collage::IndexSet> run(const std::vector<std::size_t>& seeds) {
    current_.clear();
    to_add_.clear();
    seen_.clear();
    for (std::size_t i : seeds) add(make(collage::IndexSet(graph_.size(), {i}), graph_.kind(i)));
    while (prepare_for_next_round()) {
      if (!rules_.simple.empty()) all_simple();
      if (rules_.tuple_arg) tuple_arg();
      if (rules_.tuple_proj) tuple_proj();
      if (rules_.constant) constant();
    }
    std::vector<collage::IndexSet> out;
    for (const Sub& s : current_) out.push_back(s.inside);
    return out;
  }

 private:
  struct Sub {
    collage::IndexSet inside, entry, exit, input, output;
    std::size_t depth = 0;
    collage::OpKind kind = collage::OpKind::elemwise;
  };

  /// SubGraph's constructor (SubGraphNode::Init and Depth).
  Sub make(collage::IndexSet inside, collage::OpKind kind) const {
    const std::size_t n = graph_.size();
    Sub s{inside, collage::IndexSet(n), collage::IndexSet(n), collage::IndexSet(n), collage::IndexSet(n), 0, kind};
    for (std::size_t i = 0; i < n; ++i) {
      if (inside.contains(i)) {
        bool input_outside = false;
        for (std::size_t j : graph_.inputs(i)) input_outside |= !inside.contains(j) && !graph_.is_inlinable(j);
        bool output_outside = graph_.is_external(i);
        for (std::size_t o : graph_.outputs(i)) output_outside |= !inside.contains(o);
        if (input_outside) s.entry.add(i);
        if (output_outside) s.exit.add(i);
      } else {
        bool input_inside = false;
        for (std::size_t j : graph_.inputs(i)) input_inside |= inside.contains(j);
        bool output_inside = false;
        for (std::size_t o : graph_.outputs(i)) output_inside |= inside.contains(o);
        if (input_inside) s.output.add(i);
        if (output_inside && !graph_.is_inlinable(i)) s.input.add(i);
      }
    }
    // TVM: the depth counts the nodes on paths from an entry to an exit; nodes no entry reaches
    // (a pulled-in constant) do not count.
    std::vector<std::size_t> depth_at(n, collage::npos);
    std::vector<std::size_t> stack;
    for (std::size_t e : s.entry) {
      depth_at[e] = 0;
      stack.push_back(e);
    }
    while (!stack.empty()) {
      const std::size_t v = stack.back();
      stack.pop_back();
      const std::size_t next = depth_at[v] + 1;
      if (s.exit.contains(v)) s.depth = std::max(s.depth, next);
      for (std::size_t o : graph_.outputs(v)) {
        if (!inside.contains(o)) continue;
        if (depth_at[o] == collage::npos || next > depth_at[o]) {
          depth_at[o] = next;
          stack.push_back(o);
        }
      }
    }
    return s;
  }

  Sub disjoint_union(const Sub& a, const Sub& b) const {
    return make(a.inside | b.inside, std::max(a.kind, b.kind));
  }

  void add(Sub s) {
    if (seen_.insert(s.inside).second) to_add_.push_back(std::move(s));
  }

  bool prepare_for_next_round() {
    first_new_ = current_.size();
    const bool added = !to_add_.empty();
    for (Sub& s : to_add_) current_.push_back(std::move(s));
    to_add_.clear();
    return added;
  }

  /// downstream_of(o) (o and every node it reaches) meets `targets`.
  bool reaches_any(std::size_t from, const collage::IndexSet& targets) const {
    std::vector<bool> seen(graph_.size(), false);
    std::vector<std::size_t> stack{from};
    seen[from] = true;
    while (!stack.empty()) {
      const std::size_t v = stack.back();
      stack.pop_back();
      if (targets.contains(v)) return true;
      for (std::size_t o : graph_.outputs(v)) {
        if (!seen[o]) {
          seen[o] = true;
          stack.push_back(o);
        }
      }
    }
    return false;
  }

  bool flows_into(const Sub& left, const Sub& right) const {
    for (std::size_t o : left.output) {
      if (!right.inside.contains(o) && reaches_any(o, right.entry)) return true;
    }
    return false;
  }

  bool are_touching(const Sub& up, const Sub& down) const {
    return up.inside.is_disjoint(down.inside) && up.output.intersects(down.entry) && !flows_into(up, down) &&
           !flows_into(down, up);
  }

  void all_simple() {
    const std::size_t size = current_.size();
    std::vector<std::vector<std::size_t>> entry_map(graph_.size());
    for (std::size_t i = 0; i < size; ++i) {
      for (std::size_t e : current_[i].entry) entry_map[e].push_back(i);
    }
    for (std::size_t i = 0; i < size; ++i) {
      const Sub& up = current_[i];
      std::set<std::size_t> possible_downstream;
      for (std::size_t o : up.output) possible_downstream.insert(entry_map[o].begin(), entry_map[o].end());
      // TVM: meant to skip pairs of two old candidates, this skips every pair with an old upstream.
      const std::size_t start_j = i < first_new_ ? first_new_ : 0;
      for (std::size_t j : possible_downstream) {
        if (i == j || i < start_j) continue;
        const Sub& down = current_[j];
        // TVM: bounds the sum of the two depths, not the depth of the union.
        if (max_depth_ > 0 && up.depth + down.depth > max_depth_) continue;
        if (!are_touching(up, down)) continue;
        for (const ByKind& rule : rules_.simple) {
          if (up.kind <= rule.up && down.kind <= rule.down) add(disjoint_union(up, down));
        }
      }
    }
  }

  void tuple_arg() {
    const std::size_t size = current_.size();
    std::vector<std::vector<std::size_t>> exit_map(graph_.size());
    for (std::size_t i = 0; i < size; ++i) {
      if (current_[i].kind > collage::OpKind::injective) continue;
      for (std::size_t e : current_[i].exit) exit_map[e].push_back(i);
    }
    for (std::size_t i = 0; i < size; ++i) {
      const Sub& consumer = current_[i];
      if (consumer.kind > collage::OpKind::injective) continue;
      for (std::size_t t : consumer.input) {
        if (!graph_.is_tuple(t)) continue;
        std::vector<std::vector<const Sub*>> unions(1);
        const Sub tuple = make(collage::IndexSet(graph_.size(), {t}), collage::OpKind::injective);
        unions.back() = {&consumer, &tuple};
        bool all_fields_have_producer = true;
        for (std::size_t field : graph_.inputs(t)) {
          std::vector<const Sub*> to_appends;
          const std::size_t start_j = i < first_new_ ? first_new_ : 0;
          for (std::size_t j : exit_map[field]) {
            if (i == j || i < start_j) continue;  // TVM: as in all_simple, old consumers never join
            to_appends.push_back(&current_[j]);
          }
          if (to_appends.empty()) {
            all_fields_have_producer = false;
            break;
          }
          std::vector<std::vector<const Sub*>> next;
          for (const Sub* a : to_appends) {
            for (const auto& u : unions) {
              next.push_back(u);
              next.back().push_back(a);
            }
          }
          unions = std::move(next);
        }
        if (!all_fields_have_producer) continue;
        for (const auto& u : unions) {
          // TVM: ICHECKs that the parts are disjoint (two fields from one producer would abort);
          // such unions are skipped here. Nor does TVM check that the union is convex.
          Sub joined = *u[0];
          bool disjoint = true;
          for (std::size_t k = 1; k < u.size() && disjoint; ++k) {
            disjoint = joined.inside.is_disjoint(u[k]->inside);
            if (disjoint) joined = disjoint_union(joined, *u[k]);
          }
          if (disjoint && u.size() > 2) add(std::move(joined));
        }
      }
    }
  }

  void tuple_proj() {
    const std::size_t size = current_.size();
    for (std::size_t i = first_new_; i < size; ++i) {
      for (std::size_t o : current_[i].output) {
        if (!graph_.is_projection(o)) continue;
        add(disjoint_union(current_[i], make(collage::IndexSet(graph_.size(), {o}), collage::OpKind::injective)));
      }
    }
  }

  void constant() {
    const std::size_t size = current_.size();
    for (std::size_t i = first_new_; i < size; ++i) {
      collage::IndexSet constants(graph_.size());
      for (std::size_t j : current_[i].input) {
        if (graph_.is_constant(j)) constants.add(j);
      }
      if (!constants.empty()) add(disjoint_union(current_[i], make(constants, collage::OpKind::elemwise)));
    }
  }

  const collage::DataflowGraph<G>& graph_;
  Rules rules_;
  std::size_t max_depth_;
  std::vector<Sub> current_;
  std::vector<Sub> to_add_;
  std::set<collage::IndexSet> seen_;
  std::size_t first_new_ = 0;
};

}  // namespace testing_ir
