#pragma once

/// \file
/// Transfers between devices: where each target's kernels run, what moving a value from one device
/// to another costs, and the rule by which the searchers charge those moves.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/support/index_set.hpp"
#include "collage/support/numbers.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// The most devices a transfer model may name (device indexes 0 to kMaxDevices - 1).
inline constexpr std::size_t kMaxDevices = 8;

/// Where targets run and what moving a value between devices costs, for a search that should
/// decide whether a move is worth it (a CPU part feeding a GPU part pays for the copy). A "device"
/// is any place a value can be whose moves cost something: a device, or a device and a layout (the
/// example compiler places backends that keep tensors in a blocked layout on a device index of their
/// own, and moving there is a reorder).
///
/// Device 0 is the host: by default the graph's inputs live there and its outputs must end there.
/// A target not listed in `device` runs on the host. The searchers charge, for each part on device
/// d: every value it reads that is not on d yet (produced by a part on another device, or a graph
/// input when d is not the host) moves once to d, costing cost(producer, its device, d), and stays
/// there for later readers on d; every graph output it computes off the host moves to the host,
/// costing cost(node, d, 0). Values of nodes that need no kernel and stay with the host (a tuple,
/// a projection) are charged as the values they pass on. Constants and inlinable nodes are free:
/// a constant is placed on every device that uses it when the model is loaded.
struct TransferModel {
  /// The device of each target, by target name (0 to kMaxDevices - 1).
  std::map<std::string, std::size_t, std::less<>> device;
  /// What moving the value of node `node` (a DataflowGraph index) from device `from` to device `to`
  /// costs, in the oracle's unit; called for every node and ordered pair of distinct devices when
  /// the search problem is built. Must return a finite number >= 0.
  std::function<double(std::size_t node, std::size_t from, std::size_t to)> cost;
  /// Whether graph inputs start on the host (false: each is bound, before the run, to every device
  /// that reads it, and never charged).
  bool inputs_start_on_host = true;
  /// Whether graph outputs must end on the host (false: they stay where they are computed).
  bool outputs_end_on_host = true;
  /// The unit of `cost` (e.g. "ms"), or empty when not said; partition() refuses an oracle that
  /// says another.
  std::string unit;

  /// Whether some target runs off the host (otherwise nothing ever moves).
  bool places_off_host() const;
};

/// A TransferModel tabulated over one graph: what the searchers read, and what a trace records.
/// Empty (`enabled()` false) when nothing ever moves.
struct TransferTable {
  /// The device of each target, by name; targets not listed run on device 0.
  std::map<std::string, std::size_t, std::less<>> device;
  /// Number of devices: 1 + the largest device index named.
  std::size_t devices = 1;
  /// cost[(node * devices + from) * devices + to]; 0 where from == to.
  std::vector<double> cost;
  /// As TransferModel's.
  bool inputs_start_on_host = true;
  bool outputs_end_on_host = true;

  bool enabled() const { return !cost.empty(); }
  std::size_t device_of(std::string_view target) const {
    auto it = device.find(target);
    return it == device.end() ? 0 : it->second;
  }
  double at(std::size_t node, std::size_t from, std::size_t to) const { return cost[(node * devices + from) * devices + to]; }
};

namespace detail {

/// Whether `device` places some target off the host.
inline bool places_off_host(const std::map<std::string, std::size_t, std::less<>>& device) {
  for (const auto& entry : device) {
    if (entry.second != 0) return true;
  }
  return false;
}

/// The number of devices `device` names (1 + its largest index), or an invalid_argument Error
/// naming `field` and the target when an index is kMaxDevices or more.
inline Result<std::size_t> count_devices(const std::map<std::string, std::size_t, std::less<>>& device, std::string_view field) {
  std::size_t devices = 1;
  for (const auto& [target, d] : device) {
    if (d >= kMaxDevices) {
      return Error{ErrorCode::invalid_argument, std::string(field) + " of target '" + target + "' is " +
                                                    std::to_string(d) + ": devices are 0 to " +
                                                    std::to_string(kMaxDevices - 1)};
    }
    devices = std::max(devices, d + 1);
  }
  return devices;
}

/// An invalid_argument Error when a transfer cost of node `label` is negative, NaN or infinite.
inline std::optional<Error> check_transfer_cost(double cost, const std::string& label, std::size_t from,
                                                std::size_t to) {
  if (std::isfinite(cost) && cost >= 0) return std::nullopt;
  return Error{ErrorCode::invalid_argument, "transfer cost of node '" + label + "' from device " +
                                                std::to_string(from) + " to device " + std::to_string(to) +
                                                " is " + format_double(cost) + ": it must be a finite number >= 0"};
}

}  // namespace detail

inline bool TransferModel::places_off_host() const { return detail::places_off_host(device); }

/// `model` tabulated over `graph`. Fails with ErrorCode::invalid_argument on a device index of
/// kMaxDevices or more, a missing cost function while some target runs off the host, or a cost
/// that is negative, NaN or infinite (naming the node and the devices).
template <class G>
Result<TransferTable> tabulate_transfers(const DataflowGraph<G>& graph, const TransferModel& model) {
  TransferTable table;
  Result<std::size_t> devices = detail::count_devices(model.device, "TransferModel::device");
  if (!devices.ok()) return devices.error();
  if (!model.places_off_host()) return table;
  if (!model.cost) {
    return Error{ErrorCode::invalid_argument, "TransferModel::cost is empty while TransferModel::device places "
                                              "targets off the host"};
  }
  table.device = model.device;
  table.devices = *devices;
  table.inputs_start_on_host = model.inputs_start_on_host;
  table.outputs_end_on_host = model.outputs_end_on_host;
  const std::size_t d = table.devices;
  table.cost.assign(graph.size() * d * d, 0.0);
  for (std::size_t node = 0; node < graph.size(); ++node) {
    for (std::size_t from = 0; from < d; ++from) {
      for (std::size_t to = 0; to < d; ++to) {
        if (from == to) continue;
        const double c = model.cost(node, from, to);
        if (auto error = detail::check_transfer_cost(c, graph.label(node), from, to)) return std::move(*error);
        table.cost[(node * d + from) * d + to] = c;
      }
    }
  }
  return table;
}

namespace detail {

/// An invalid_argument Error when `table` does not fit a graph of `nodes` nodes (a table read
/// from a trace): its device count, its size, or a cost out of domain.
inline std::optional<Error> check_transfer_table(const TransferTable& table, std::size_t nodes) {
  if (!table.enabled()) return std::nullopt;
  Result<std::size_t> devices = count_devices(table.device, "transfer device");
  if (!devices.ok()) return devices.error();
  if (table.devices < *devices || table.devices > kMaxDevices ||
      table.cost.size() != nodes * table.devices * table.devices) {
    return Error{ErrorCode::invalid_argument, "the transfer table holds " + std::to_string(table.cost.size()) +
                                                  " costs for " + std::to_string(table.devices) +
                                                  " devices: it does not fit a graph of " + std::to_string(nodes) +
                                                  " nodes"};
  }
  for (double c : table.cost) {
    if (!std::isfinite(c) || c < 0) {
      return Error{ErrorCode::invalid_argument, "a transfer cost is " + format_double(c) +
                                                    ": it must be a finite number >= 0"};
    }
  }
  return std::nullopt;
}

/// Where one value is: the device that produced it and the devices holding a copy (a bit per
/// device, its own included).
struct Placement {
  std::uint32_t node = 0;
  std::uint8_t home = 0;
  std::uint8_t on = 0;

  friend bool operator==(const Placement& a, const Placement& b) {
    return a.node == b.node && a.home == b.home && a.on == b.on;
  }
  friend bool operator!=(const Placement& a, const Placement& b) { return !(a == b); }
};

/// Whether node i's value is never charged a move: a constant or an inlinable node.
template <class G>
bool travels_free(const DataflowGraph<G>& graph, std::size_t i) {
  return graph.is_inlinable(i) || graph.is_constant(i);
}

/// Where the values a search state still reads are: Placements ascending by node, behind one
/// pointer that stays null while the list is empty, so that the states of a search without
/// transfers carry 8 bytes for it.
class PlacementList {
 public:
  PlacementList() = default;
  PlacementList(const PlacementList& other) : list_(other.empty() ? nullptr : copy(*other.list_)) {}
  PlacementList& operator=(const PlacementList& other) {
    if (this != &other) *this = PlacementList(other);
    return *this;
  }
  PlacementList(PlacementList&& other) noexcept : list_(other.list_) { other.list_ = nullptr; }
  PlacementList& operator=(PlacementList&& other) noexcept {
    std::swap(list_, other.list_);
    return *this;
  }
  ~PlacementList() {
    if (list_ != nullptr) destroy(list_);  // a null test where nothing moves
  }

  bool empty() const { return list_ == nullptr || list_->empty(); }
  /// The list, made when first asked for.
  std::vector<Placement>& items() {
    if (list_ == nullptr) list_ = new std::vector<Placement>();
    return *list_;
  }
  const Placement* begin() const { return empty() ? nullptr : list_->data(); }
  const Placement* end() const { return empty() ? nullptr : list_->data() + list_->size(); }
  /// Bytes held on the heap.
  std::size_t heap_bytes() const {
    return list_ == nullptr ? 0 : sizeof(*list_) + list_->capacity() * sizeof(Placement);
  }

  friend bool operator==(const PlacementList& a, const PlacementList& b) {
    if (a.empty() || b.empty()) return a.empty() == b.empty();
    return *a.list_ == *b.list_;
  }

 private:
  static std::vector<Placement>* copy(const std::vector<Placement>& list) { return new std::vector<Placement>(list); }
  static void destroy(std::vector<Placement>* list) { delete list; }

  std::vector<Placement>* list_ = nullptr;
};

/// Charges the transfers of a part on `device` that reads `input` and holds `inside` (see
/// TransferModel), updating where values are in `store`, and returns their cost. `store` offers
/// Placement* find(node), void put(Placement) and bool keeps(node) (whether a value produced now
/// is worth recording). `stack` is scratch.
template <class G, class Store>
double charge_transfers(const DataflowGraph<G>& graph, const TransferTable& table, const IndexSet& input,
                        const IndexSet& inside, std::size_t device, Store& store, std::vector<std::size_t>& stack) {
  const auto bit = static_cast<std::uint8_t>(1u << device);
  double total = 0;
  stack.assign(input.begin(), input.end());
  while (!stack.empty()) {
    const std::size_t i = stack.back();
    stack.pop_back();
    if (travels_free(graph, i)) continue;
    if (Placement* p = store.find(i)) {
      if (!(p->on & bit)) {
        total += table.at(i, p->home, device);
        p->on |= bit;
      }
    } else if (graph.inputs(i).empty()) {
      // A graph input, on the host until a part elsewhere reads it.
      if (device != 0 && table.inputs_start_on_host) {
        total += table.at(i, 0, device);
        store.put(Placement{static_cast<std::uint32_t>(i), 0, static_cast<std::uint8_t>(1u | bit)});
      }
    } else if (!graph.needs_kernel(i)) {  // (a kernel node's value is recorded while it is read)
      for (std::size_t j : graph.inputs(i)) stack.push_back(j);  // a pass-through left with the host
    }
  }
  for (std::size_t n : inside) {
    if (travels_free(graph, n)) continue;
    Placement p{static_cast<std::uint32_t>(n), static_cast<std::uint8_t>(device), bit};
    if (device != 0 && table.outputs_end_on_host && graph.is_external(n)) {
      total += table.at(n, device, 0);
      p.on |= 1u;
    }
    if (store.keeps(n)) store.put(p);
  }
  return total;
}

/// A Placement store over every node of a graph (for replaying a whole partitioning).
class DensePlacements {
 public:
  explicit DensePlacements(std::size_t nodes) : at_(nodes), known_(nodes, false) {}
  Placement* find(std::size_t node) { return known_[node] ? &at_[node] : nullptr; }
  void put(Placement p) {
    at_[p.node] = p;
    known_[p.node] = true;
  }
  bool keeps(std::size_t) const { return true; }

 private:
  std::vector<Placement> at_;
  std::vector<bool> known_;
};

}  // namespace detail
}  // namespace collage
