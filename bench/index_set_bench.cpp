// IndexSet operations at universes of 64, 1,024 and 100,000 bits, on random sets of ~30% density
// (fixed seed). Items processed are bits of the universe, so items/s reads as bits scanned per
// second; the `bits` counter is the universe size. Operands are chosen so that the operations that
// can stop early (intersects, is_subset_of, ==, <) must scan every word.
//
// The *Local benchmarks use what candidate sub-graphs look like instead: 8 indexes within 256
// consecutive ones, at a random place in the universe. IndexSet stores only the words between its
// first and last member, so their cost should not grow with the universe.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "collage/support/index_set.hpp"

namespace {

using collage::IndexSet;

/// A random set over [0, universe) with each index inside with probability `density`.
IndexSet random_set(std::size_t universe, double density, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution coin(density);
  IndexSet s(universe);
  for (std::size_t i = 0; i < universe; ++i) {
    if (coin(rng)) s.add(i);
  }
  return s;
}

void set_counters(benchmark::State& state, std::size_t universe) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(universe));
  state.counters["bits"] = static_cast<double>(universe);
}

void BM_Union(benchmark::State& state) {
  const auto universe = static_cast<std::size_t>(state.range(0));
  const IndexSet a = random_set(universe, 0.3, 1);
  const IndexSet b = random_set(universe, 0.3, 2);
  for (auto _ : state) {
    IndexSet c = a | b;
    benchmark::DoNotOptimize(c);
  }
  set_counters(state, universe);
}

void BM_UnionInPlace(benchmark::State& state) {
  const auto universe = static_cast<std::size_t>(state.range(0));
  IndexSet a = random_set(universe, 0.3, 1);
  const IndexSet b = random_set(universe, 0.3, 2);
  for (auto _ : state) {
    a |= b;
    benchmark::DoNotOptimize(a);
  }
  set_counters(state, universe);
}

void BM_Intersects(benchmark::State& state) {
  // Disjoint operands: the answer is false only after the last word.
  const auto universe = static_cast<std::size_t>(state.range(0));
  const IndexSet a = random_set(universe, 0.3, 1);
  const IndexSet b = IndexSet::full(universe) - a;
  for (auto _ : state) benchmark::DoNotOptimize(a.intersects(b));
  set_counters(state, universe);
}

void BM_IsSubsetOf(benchmark::State& state) {
  // A true subset: every word is compared.
  const auto universe = static_cast<std::size_t>(state.range(0));
  const IndexSet a = random_set(universe, 0.3, 1);
  const IndexSet b = a | random_set(universe, 0.3, 2);
  for (auto _ : state) benchmark::DoNotOptimize(a.is_subset_of(b));
  set_counters(state, universe);
}

void BM_Count(benchmark::State& state) {
  const auto universe = static_cast<std::size_t>(state.range(0));
  const IndexSet a = random_set(universe, 0.3, 1);
  for (auto _ : state) benchmark::DoNotOptimize(a.count());
  set_counters(state, universe);
}

void BM_Iterate(benchmark::State& state) {
  const auto universe = static_cast<std::size_t>(state.range(0));
  const IndexSet a = random_set(universe, 0.3, 1);
  const std::size_t members = a.count();
  for (auto _ : state) {
    std::size_t sum = 0;
    for (std::size_t i : a) sum += i;
    benchmark::DoNotOptimize(sum);
  }
  set_counters(state, universe);
  state.counters["members"] = static_cast<double>(members);
  state.counters["members_per_s"] =
      benchmark::Counter(static_cast<double>(members) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void BM_NextInsideScan(benchmark::State& state) {
  // The explicit next_inside loop the searchers use, over a sparse (2%) set whose last index is
  // inside, so the scan always crosses the whole universe: mostly word skipping.
  const auto universe = static_cast<std::size_t>(state.range(0));
  IndexSet a = random_set(universe, 0.02, 3);
  a.add(universe - 1);
  for (auto _ : state) {
    std::size_t n = 0;
    for (std::size_t i = a.first_inside(); i != collage::npos; i = a.next_inside(i)) ++n;
    benchmark::DoNotOptimize(n);
  }
  set_counters(state, universe);
  state.counters["members"] = static_cast<double>(a.count());
}

void BM_Hash(benchmark::State& state) {
  const auto universe = static_cast<std::size_t>(state.range(0));
  const IndexSet a = random_set(universe, 0.3, 1);
  for (auto _ : state) benchmark::DoNotOptimize(a.hash());
  set_counters(state, universe);
}

void BM_Equal(benchmark::State& state) {
  // Equal operands in separate storage: every word is compared.
  const auto universe = static_cast<std::size_t>(state.range(0));
  const IndexSet a = random_set(universe, 0.3, 1);
  const IndexSet b = a;
  for (auto _ : state) benchmark::DoNotOptimize(a == b);
  set_counters(state, universe);
}

void BM_Less(benchmark::State& state) {
  // Operands that differ only in the last index: the order is decided in the last word.
  const auto universe = static_cast<std::size_t>(state.range(0));
  IndexSet a = random_set(universe, 0.3, 1);
  IndexSet b = a;
  a.remove(universe - 1);
  b.add(universe - 1);
  for (auto _ : state) benchmark::DoNotOptimize(a < b);
  set_counters(state, universe);
}

void BM_Copy(benchmark::State& state) {
  // A copy: inline (no allocation) up to 128 bits, heap above.
  const auto universe = static_cast<std::size_t>(state.range(0));
  const IndexSet a = random_set(universe, 0.3, 1);
  for (auto _ : state) {
    IndexSet b = a;
    benchmark::DoNotOptimize(b);
  }
  set_counters(state, universe);
}

/// `count` sets of 8 random indexes drawn from a 256-index window of [0, universe): at random places
/// when `near` is null, else within 256 indexes after the corresponding set of `near`.
std::vector<IndexSet> local_sets(std::size_t universe, std::size_t count, std::uint64_t seed,
                                 const std::vector<IndexSet>* near = nullptr) {
  std::mt19937_64 rng(seed);
  const std::size_t width = std::min<std::size_t>(universe, 256);
  std::uniform_int_distribution<std::size_t> place(0, universe - width);
  std::uniform_int_distribution<std::size_t> offset(0, width - 1);
  std::vector<IndexSet> sets;
  for (std::size_t k = 0; k < count; ++k) {
    IndexSet s(universe);
    const std::size_t base =
        near == nullptr ? place(rng) : std::min(universe - width, (*near)[k].first_inside() + offset(rng));
    for (int m = 0; m < 8; ++m) s.add(base + offset(rng));
    sets.push_back(std::move(s));
  }
  return sets;
}

void BM_UnionLocal(benchmark::State& state) {
  // Two nearby local sets, as when two neighbouring candidates are merged.
  const auto universe = static_cast<std::size_t>(state.range(0));
  const std::vector<IndexSet> a = local_sets(universe, 256, 4);
  const std::vector<IndexSet> b = local_sets(universe, 256, 5, &a);
  std::size_t k = 0;
  for (auto _ : state) {
    IndexSet c = a[k] | b[k];
    benchmark::DoNotOptimize(c);
    k = (k + 1) % a.size();
  }
  set_counters(state, universe);
}

void BM_IntersectsLocal(benchmark::State& state) {
  // Each set against its own neighbours in the list: usually disjoint, sometimes overlapping windows.
  const auto universe = static_cast<std::size_t>(state.range(0));
  const std::vector<IndexSet> a = local_sets(universe, 256, 4);
  std::size_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(a[k].intersects(a[(k + 1) % a.size()]));
    k = (k + 1) % a.size();
  }
  set_counters(state, universe);
}

void BM_CountLocal(benchmark::State& state) {
  const auto universe = static_cast<std::size_t>(state.range(0));
  const std::vector<IndexSet> a = local_sets(universe, 256, 4);
  std::size_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(a[k].count());
    k = (k + 1) % a.size();
  }
  set_counters(state, universe);
}

void BM_CopyLocal(benchmark::State& state) {
  const auto universe = static_cast<std::size_t>(state.range(0));
  const std::vector<IndexSet> a = local_sets(universe, 256, 4);
  std::size_t k = 0;
  for (auto _ : state) {
    IndexSet c = a[k];
    benchmark::DoNotOptimize(c);
    k = (k + 1) % a.size();
  }
  set_counters(state, universe);
}

#define COLLAGE_INDEX_SET_BENCH(fn) BENCHMARK(fn)->Arg(64)->Arg(1024)->Arg(100000)
COLLAGE_INDEX_SET_BENCH(BM_Union);
COLLAGE_INDEX_SET_BENCH(BM_UnionInPlace);
COLLAGE_INDEX_SET_BENCH(BM_Intersects);
COLLAGE_INDEX_SET_BENCH(BM_IsSubsetOf);
COLLAGE_INDEX_SET_BENCH(BM_Count);
COLLAGE_INDEX_SET_BENCH(BM_Iterate);
COLLAGE_INDEX_SET_BENCH(BM_NextInsideScan);
COLLAGE_INDEX_SET_BENCH(BM_Hash);
COLLAGE_INDEX_SET_BENCH(BM_Equal);
COLLAGE_INDEX_SET_BENCH(BM_Less);
COLLAGE_INDEX_SET_BENCH(BM_Copy);
COLLAGE_INDEX_SET_BENCH(BM_UnionLocal);
COLLAGE_INDEX_SET_BENCH(BM_IntersectsLocal);
COLLAGE_INDEX_SET_BENCH(BM_CountLocal);
COLLAGE_INDEX_SET_BENCH(BM_CopyLocal);
#undef COLLAGE_INDEX_SET_BENCH

}  // namespace
