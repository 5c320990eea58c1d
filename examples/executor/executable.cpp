#include "executor/executable.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <tuple>
#include <utility>

#include "executor/memory_plan.hpp"
#include "executor/threaded_reorder.hpp"
#include "runtime/cpu_state.hpp"
#include "tensor/op_attrs.hpp"

namespace tc {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;

struct Executable::State {
  /// A tensor (a model node's value) held on one device.
  struct Slot {
    int node = -1;
    DeviceKind device = DeviceKind::cpu;
    Layout layout = Layout::plain;
    std::size_t bytes = 0;
    int first = 0;
    int last = 0;
    std::size_t offset = 0;
    /// The slot this one is a slice of (a concatenation's input written in place), or -1; then
    /// `offset` is first the slice's offset in that slot.
    int slice_of = -1;
  };
  struct Step {
    Kernel* kernel = nullptr;  // null for a copy
    std::vector<int> inputs;   // slots
    std::vector<int> outputs;  // slots
    /// The axis of a lone Concat whose inputs are slices of its result (in_place_concat_axis), or -1.
    int concat_axis = -1;
    /// Whether its inputs were written in place (it runs nothing).
    bool in_place = false;
  };
  /// Where a model output comes from: a slot, or the host (a model input or constant).
  struct OutputSource {
    int slot = -1;
    int host_node = -1;
  };

  const Graph* model = nullptr;
  DeviceSet devices;
  std::vector<Slot> slots;
  std::map<std::tuple<int, DeviceKind, Layout>, int> slot_of;
  std::vector<int> first_slot;  // per model node: its first slot (the producer's), or -1
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<Step> steps;
  std::vector<StepInfo> infos;
  std::vector<std::vector<int>> input_slots;  // per model input
  std::vector<Tensor> host_inputs;            // the last inputs set, for outputs that are inputs
  std::vector<OutputSource> output_sources;
  std::map<DeviceKind, OwnedBuffer> arenas;
  std::vector<ArenaStats> memory;
  bool inputs_set = false;
  bool flush_denormals = true;
  int cpu_threads = 1;
  /// Steps [first, end) run as one: recorded on `device` and replayed when `device` is set.
  struct Segment {
    std::size_t first = 0;
    std::size_t end = 0;
    Device* device = nullptr;
    std::unique_ptr<Recording> recording;
  };
  std::vector<Segment> segments;
  std::vector<std::string> notes;

  int add_slot(int node, DeviceKind device, Layout layout, int step) {
    Slot s;
    s.node = node;
    s.device = device;
    s.layout = layout;
    s.bytes = stored_floats(model->node(node).shape, layout) * sizeof(float);
    s.first = s.last = step;
    slots.push_back(s);
    const int id = static_cast<int>(slots.size() - 1);
    slot_of[{node, device, layout}] = id;
    if (first_slot[static_cast<std::size_t>(node)] < 0) first_slot[static_cast<std::size_t>(node)] = id;
    return id;
  }
  int find_slot(int node, DeviceKind device, Layout layout) const {
    auto it = slot_of.find({node, device, layout});
    return it == slot_of.end() ? -1 : it->second;
  }

  /// The slot holding `from`'s value on `device` in `layout`: `from` itself, one made earlier, or
  /// one made now by steps moving it there (a reorder to plain before leaving a device in a
  /// blocked layout, a copy between devices, a reorder into the layout), each at the next `step`.
  int place(int from, DeviceKind device, Layout layout, int& step) {
    int at = from;
    const int node = slots[static_cast<std::size_t>(from)].node;
    auto move_to = [&](DeviceKind d, Layout l) {
      if (const int found = find_slot(node, d, l); found >= 0) {
        at = found;
        return;
      }
      ++step;
      const int made = add_slot(node, d, l, step);
      slots[static_cast<std::size_t>(at)].last = step;
      const bool copy = slots[static_cast<std::size_t>(at)].device != d;
      steps.push_back(Step{nullptr, {at}, {made}});
      infos.push_back(StepInfo{copy ? "copy" : "reorder", {node}, d});
      at = made;
    };
    if (slots[static_cast<std::size_t>(at)].device != device) {
      if (slots[static_cast<std::size_t>(at)].layout != Layout::plain) move_to(slots[static_cast<std::size_t>(at)].device, Layout::plain);
      move_to(device, Layout::plain);
    }
    if (slots[static_cast<std::size_t>(at)].layout != layout) move_to(device, layout);
    return at;
  }
  /// The first slot made for `node` (the producer's), or -1.
  int producer_slot(int node) const { return first_slot[static_cast<std::size_t>(node)]; }
  void* address(int slot) const {
    const Slot& s = slots[static_cast<std::size_t>(slot)];
    return static_cast<char*>(arenas.at(s.device).get().data) + s.offset;
  }

  /// The device step `k` runs on when it can be recorded there (a kernel, or a copy within one
  /// device, on a device that records), else nullptr.
  Device* recording_device(std::size_t k) const {
    const Step& step = steps[k];
    const DeviceKind kind = infos[k].device;
    if (step.kernel == nullptr && (slots[static_cast<std::size_t>(step.inputs[0])].device != kind ||
                                   slots[static_cast<std::size_t>(step.inputs[0])].layout !=
                                       slots[static_cast<std::size_t>(step.outputs[0])].layout)) {
      return nullptr;
    }
    Device* device = devices.find(kind);
    return device != nullptr && device->can_record() ? device : nullptr;
  }

  /// Splits the steps into segments: runs of steps recordable on one device (when `record`),
  /// every other step alone.
  void plan_segments(bool record) {
    for (std::size_t k = 0; k < steps.size(); ++k) {
      Device* device = record ? recording_device(k) : nullptr;
      if (device != nullptr && !segments.empty() && segments.back().device == device && segments.back().end == k) {
        ++segments.back().end;
      } else {
        segments.push_back(Segment{k, k + 1, device, nullptr});
      }
    }
  }

  /// Makes the inputs of each Concat step that qualifies (ExecutableOptions::concat_in_place)
  /// slices of its output: a slice's producer writes it in place and the step runs nothing.
  void concatenate_in_place(const std::vector<bool>& model_output_slot) {
    constexpr std::size_t kSliceAlignment = 64;  // plan_memory's: a slice is aligned as any buffer
    std::vector<int> readers(slots.size(), 0);
    std::vector<int> producer(slots.size(), -1);
    for (std::size_t k = 0; k < steps.size(); ++k) {
      for (int in : steps[k].inputs) ++readers[static_cast<std::size_t>(in)];
      for (int out : steps[k].outputs) producer[static_cast<std::size_t>(out)] = static_cast<int>(k);
    }
    for (std::size_t k = 0; k < steps.size(); ++k) {
      Step& step = steps[k];
      if (step.concat_axis < 0 || step.outputs.size() != 1) continue;
      const auto result = static_cast<std::size_t>(step.outputs[0]);
      if (slots[result].slice_of >= 0) continue;
      bool fits = true;
      std::size_t offset = 0;
      for (int in : step.inputs) {
        const Slot& slot = slots[static_cast<std::size_t>(in)];
        const int from = producer[static_cast<std::size_t>(in)];
        fits = fits && from >= 0 && steps[static_cast<std::size_t>(from)].kernel != nullptr &&
               !steps[static_cast<std::size_t>(from)].in_place && slot.device == slots[result].device &&
               slot.layout == slots[result].layout && whole_blocks(slot, step.concat_axis) &&
               readers[static_cast<std::size_t>(in)] == 1 && !model_output_slot[static_cast<std::size_t>(in)] &&
               slot.slice_of < 0 && offset % kSliceAlignment == 0;
        offset += slot.bytes;
      }
      if (!fits || offset != slots[result].bytes) continue;
      offset = 0;
      for (int in : step.inputs) {
        Slot& slot = slots[static_cast<std::size_t>(in)];
        slot.slice_of = static_cast<int>(result);
        slots[result].first = std::min(slots[result].first, slot.first);
        slot.offset = offset;
        offset += slot.bytes;
      }
      step.in_place = true;
      infos[k].in_place = true;
    }
  }

  /// Whether `slot`, an input of a Concat along `axis`, is a contiguous slice of the result in its
  /// layout: always when plain; when blocked, along the channels in whole blocks.
  bool whole_blocks(const Slot& slot, int axis) const {
    const Shape& shape = model->node(slot.node).shape;
    if (!is_blocked(shape, slot.layout)) return true;
    return axis == 1 && shape[1] % static_cast<std::int64_t>(channel_block(slot.layout)) == 0;
  }

  /// Launches step `k`.
  Status run_step(std::size_t k) {
    const Step& step = steps[k];
    if (step.in_place) return Status::success();
    if (step.kernel == nullptr) {
      const Slot& src = slots[static_cast<std::size_t>(step.inputs[0])];
      const Slot& dst = slots[static_cast<std::size_t>(step.outputs[0])];
      if (src.layout != dst.layout) {
        reorder_on_threads(static_cast<const float*>(address(step.inputs[0])), src.layout,
                           static_cast<float*>(address(step.outputs[0])), dst.layout, model->node(src.node).shape,
                           cpu_threads);
        return Status::success();
      }
      return copy_between(*devices.find(dst.device), address(step.outputs[0]), *devices.find(src.device),
                          address(step.inputs[0]), src.bytes, arenas.at(dst.device).get(), arenas.at(src.device).get());
    }
    std::vector<const float*> in;
    std::vector<float*> out;
    for (int slot : step.inputs) in.push_back(static_cast<const float*>(address(slot)));
    for (int slot : step.outputs) out.push_back(static_cast<float*>(address(slot)));
    if (infos[k].device == DeviceKind::cpu) clear_vector_upper_state();
    if (Status st = step.kernel->run(in, out); !st.ok()) {
      return Error{st.code(), "step " + std::to_string(k + 1) + " (" + infos[k].target + "): " + st.message()};
    }
    return Status::success();
  }

  /// Runs `segment`: its recording, made first when there is none or it is no longer current;
  /// where recording fails, its steps one by one from then on, with a note saying why.
  Status run_segment(Segment& segment) {
    if (segment.device != nullptr && (segment.recording == nullptr || !segment.recording->current())) {
      segment.recording.reset();
      const Status began = segment.device->begin_recording();
      Status recorded = began;
      for (std::size_t k = segment.first; k < segment.end && recorded.ok(); ++k) recorded = run_step(k);
      if (began.ok()) {
        Result<std::unique_ptr<Recording>> done = segment.device->end_recording();
        if (recorded.ok() && done.ok()) segment.recording = std::move(done).value();
        if (recorded.ok() && !done.ok()) recorded = done.error();
      }
      if (!recorded.ok()) {
        notes.push_back("recording steps " + std::to_string(segment.first + 1) + "-" + std::to_string(segment.end) +
                        " on " + segment.device->name() + " failed: " + recorded.message() +
                        "; launching them one by one");
        segment.device = nullptr;
      }
    }
    if (segment.recording != nullptr) return segment.recording->replay();
    for (std::size_t k = segment.first; k < segment.end; ++k) {
      if (Status st = run_step(k); !st.ok()) return st;
    }
    return Status::success();
  }

  static Status copy_between(Device& dst_device, void* dst, Device& src_device, const void* src, std::size_t bytes,
                             const Buffer& dst_arena, const Buffer& src_arena);
};

namespace {

/// The axis of `function` when it is a lone Concat of its parameters, each once and in order, whose
/// result has only dimensions of 1 before the axis (so that each input is a contiguous slice of
/// it); else -1.
int in_place_concat_axis(const Function& function) {
  const std::vector<int> body = function.body();
  if (body.size() != 1) return -1;
  const Graph& g = function.graph;
  const Node& node = g.node(body[0]);
  if (node.op != Op::concat || g.outputs() != std::vector<int>{body[0]} || node.inputs != g.inputs()) return -1;
  const std::size_t axis = axis_attr(node);
  for (std::size_t d = 0; d < axis && d < node.shape.size(); ++d) {
    if (node.shape[d] != 1) return -1;
  }
  return static_cast<int>(axis);
}

std::string part_name(const collage::DataflowGraph<Graph>& dataflow, std::size_t k, const collage::Candidate& part) {
  return "part " + std::to_string(k + 1) + " (" + std::string(part.target) + ": " + part.sub_graph.label(dataflow) + ")";
}

}  // namespace

Status Executable::State::copy_between(Device& dst_device, void* dst, Device& src_device, const void* src,
                                       std::size_t bytes, const Buffer& dst_arena, const Buffer& src_arena) {
  const std::size_t dst_offset = static_cast<std::size_t>(static_cast<char*>(dst) - static_cast<char*>(dst_arena.data));
  const std::size_t src_offset =
      static_cast<std::size_t>(static_cast<const char*>(src) - static_cast<const char*>(src_arena.data));
  if (&dst_device == &src_device) return dst_device.copy(dst_arena, dst_offset, src_arena, src_offset, bytes);
  if (src_device.kind() == DeviceKind::cpu) return dst_device.upload(dst_arena, dst_offset, src, bytes);
  if (dst_device.kind() == DeviceKind::cpu) return src_device.download(dst, src_arena, src_offset, bytes);
  return Error{ErrorCode::invalid_argument, "no copy path between two non-host devices"};
}

Executable::Executable(std::unique_ptr<State> state) : state_(std::move(state)) {}
Executable::Executable(Executable&&) noexcept = default;
Executable& Executable::operator=(Executable&&) noexcept = default;
Executable::~Executable() = default;

Result<Executable> Executable::compile(const collage::DataflowGraph<Graph>& dataflow,
                                       const collage::Partitioning& partitioning, const BackendSet& backends,
                                       const DeviceSet& devices, const ExecutableOptions& options) {
  auto state = std::make_unique<State>();
  State& s = *state;
  s.model = &dataflow.ir();
  s.devices = devices;
  const Graph& model = *s.model;
  s.first_slot.assign(model.size(), -1);
  s.input_slots.resize(model.inputs().size());
  std::vector<int> input_position(model.size(), -1);
  for (std::size_t k = 0; k < model.inputs().size(); ++k) input_position[static_cast<std::size_t>(model.inputs()[k])] = static_cast<int>(k);

  std::vector<Function> functions;
  std::vector<std::string> targets;
  for (const collage::Candidate& part : partitioning.parts) {
    functions.push_back(extract_function(dataflow, part.sub_graph));
    targets.emplace_back(part.target);
  }
  prepare_all(backends, devices, targets, functions);

  int step = 0;  // step 0 uploads the inputs
  for (std::size_t k = 0; k < partitioning.parts.size(); ++k) {
    const collage::Candidate& part = partitioning.parts[k];
    const Backend* backend = backends.find(std::string(part.target));
    if (backend == nullptr) return Error{ErrorCode::invalid_argument, part_name(dataflow, k, part) + ": no backend named '" + std::string(part.target) + "'"};
    Device* device = devices.find(backend->device());
    if (device == nullptr) {
      return Error{ErrorCode::invalid_argument, part_name(dataflow, k, part) + ": no " + to_string(backend->device()) + " device"};
    }
    if (!device->available()) {
      return Error{ErrorCode::invalid_argument, part_name(dataflow, k, part) + ": " + device->unavailable_reason()};
    }
    const Function& function = functions[k];
    Result<std::unique_ptr<Kernel>> kernel = backend->compile(function, *device);
    if (!kernel.ok()) return Error{kernel.error().code, part_name(dataflow, k, part) + ": " + kernel.error().message};

    State::Step launch;
    launch.kernel = kernel->get();
    launch.concat_axis = in_place_concat_axis(function);
    s.kernels.push_back(std::move(kernel).value());
    const DeviceKind where = device->kind();
    auto layout = [&](int node) { return layout_of(model.node(node).shape, backend->layout()); };
    for (int param : function.params) {
      int slot = s.find_slot(param, where, layout(param));
      if (slot < 0) {
        int source = s.producer_slot(param);
        if (const int pos = input_position[static_cast<std::size_t>(param)]; pos >= 0) {
          source = s.find_slot(param, where, Layout::plain);
          if (source < 0) {
            source = s.add_slot(param, where, Layout::plain, 0);
            s.input_slots[static_cast<std::size_t>(pos)].push_back(source);
          }
        } else if (source < 0) {
          return Error{ErrorCode::internal, part_name(dataflow, k, part) + ": input '" + model.node(param).name +
                                                "' is produced by no earlier part"};
        }
        slot = s.place(source, where, layout(param), step);
      }
      launch.inputs.push_back(slot);
    }
    ++step;
    for (int in : launch.inputs) s.slots[static_cast<std::size_t>(in)].last = step;
    for (int result : function.results) launch.outputs.push_back(s.add_slot(result, where, layout(result), step));
    s.steps.push_back(std::move(launch));
    StepInfo info{std::string(part.target), {}, where};
    for (std::size_t i : part.sub_graph.inside()) {
      if (dataflow.needs_kernel(i)) info.nodes.push_back(dataflow.handle(i));
    }
    s.infos.push_back(std::move(info));
  }
  for (int out : model.outputs()) {
    State::OutputSource source;
    const Op op = model.node(out).op;
    if (op == Op::input || op == Op::constant) {
      source.host_node = out;
    } else {
      source.slot = s.producer_slot(out);
      if (source.slot < 0) {
        return Error{ErrorCode::uncovered, "model output '" + model.node(out).name + "' is computed by no part"};
      }
      const State::Slot& produced = s.slots[static_cast<std::size_t>(source.slot)];
      source.slot = s.place(source.slot, produced.device, Layout::plain, step);
    }
    s.output_sources.push_back(source);
  }
  const int end = step + 1;
  for (const State::OutputSource& source : s.output_sources) {
    if (source.slot >= 0) s.slots[static_cast<std::size_t>(source.slot)].last = end;
  }

  if (options.concat_in_place) {
    std::vector<bool> model_output_slot(s.slots.size(), false);
    for (const State::OutputSource& source : s.output_sources) {
      if (source.slot >= 0) model_output_slot[static_cast<std::size_t>(source.slot)] = true;
    }
    s.concatenate_in_place(model_output_slot);
  }
  std::map<DeviceKind, std::vector<int>> by_device;
  for (std::size_t k = 0; k < s.slots.size(); ++k) {
    if (s.slots[k].slice_of < 0) by_device[s.slots[k].device].push_back(static_cast<int>(k));
  }
  for (const auto& [kind, slot_ids] : by_device) {
    std::vector<Lifetime> lifetimes;
    for (int id : slot_ids) {
      const State::Slot& slot = s.slots[static_cast<std::size_t>(id)];
      lifetimes.push_back(Lifetime{slot.bytes, slot.first, slot.last});
    }
    MemoryPlan plan = plan_memory(lifetimes);
    for (std::size_t j = 0; j < slot_ids.size(); ++j) s.slots[static_cast<std::size_t>(slot_ids[j])].offset = plan.offsets[j];
    for (State::Slot& slot : s.slots) {
      if (slot.slice_of >= 0 && slot.device == kind) slot.offset += s.slots[static_cast<std::size_t>(slot.slice_of)].offset;
    }
    Device* device = devices.find(kind);
    Result<OwnedBuffer> arena = allocate_owned(*device, std::max<std::size_t>(plan.arena_bytes, 64));
    if (!arena.ok()) return arena.error();
    s.arenas.emplace(kind, std::move(arena).value());
    s.memory.push_back(ArenaStats{kind, plan.arena_bytes, plan.lower_bound, slot_ids.size()});
  }
  s.plan_segments(options.record);
  s.flush_denormals = options.flush_denormals;
  s.cpu_threads = options.cpu_threads;
  return Executable(std::move(state));
}

Status Executable::set_inputs(const std::vector<Tensor>& inputs) {
  State& s = *state_;
  const Graph& model = *s.model;
  if (inputs.size() != model.inputs().size()) {
    return Error{ErrorCode::invalid_argument, "expected " + std::to_string(model.inputs().size()) + " inputs, got " +
                                                  std::to_string(inputs.size())};
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const Node& node = model.node(model.inputs()[k]);
    if (inputs[k].shape != node.shape || inputs[k].data.size() != static_cast<std::size_t>(numel(node.shape))) {
      return Error{ErrorCode::invalid_argument, "input '" + node.name + "' must be " + to_string(node.shape) + ", got " +
                                                    to_string(inputs[k].shape)};
    }
    for (int slot : s.input_slots[k]) {
      const State::Slot& sl = s.slots[static_cast<std::size_t>(slot)];
      Device& device = *s.devices.find(sl.device);
      if (Status st = device.upload(s.arenas.at(sl.device).get(), sl.offset, inputs[k].data.data(), sl.bytes); !st.ok()) return st;
    }
  }
  s.host_inputs = inputs;
  s.inputs_set = true;
  return Status::success();
}

Status Executable::execute(std::vector<double>* step_seconds) {
  State& s = *state_;
  if (!s.inputs_set) return Error{ErrorCode::invalid_argument, "execute() before set_inputs()"};
  const DenormalsFlushed denormals(s.flush_denormals);
  auto synchronize_all = [&]() -> Status {
    for (const ArenaStats& a : s.memory) {
      if (Status st = s.devices.find(a.device)->synchronize(); !st.ok()) return st;
    }
    return Status::success();
  };
  if (step_seconds == nullptr) {
    for (State::Segment& segment : s.segments) {
      if (Status st = s.run_segment(segment); !st.ok()) return st;
    }
    return synchronize_all();
  }
  step_seconds->resize(s.steps.size(), 0.0);
  for (const State::Segment& segment : s.segments) {
    if (segment.device != nullptr) {
      std::vector<std::function<Status()>> regions;
      for (std::size_t k = segment.first; k < segment.end; ++k) regions.emplace_back([&s, k] { return s.run_step(k); });
      Result<std::vector<double>> seconds = segment.device->time_regions(regions);
      if (seconds.ok()) {
        for (std::size_t k = segment.first; k < segment.end; ++k) (*step_seconds)[k] += (*seconds)[k - segment.first];
        continue;
      }
    }
    for (std::size_t k = segment.first; k < segment.end; ++k) {
      const auto started = std::chrono::steady_clock::now();
      if (Status st = s.run_step(k); !st.ok()) return st;
      if (Status st = synchronize_all(); !st.ok()) return st;
      (*step_seconds)[k] += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
  }
  return Status::success();
}

Result<std::vector<Tensor>> Executable::outputs() const {
  const State& s = *state_;
  const Graph& model = *s.model;
  std::vector<Tensor> out;
  for (std::size_t k = 0; k < model.outputs().size(); ++k) {
    const int node = model.outputs()[k];
    const State::OutputSource& source = s.output_sources[k];
    if (source.host_node >= 0) {
      const Node& n = model.node(node);
      if (n.op == Op::constant) {
        out.push_back(*n.value);
      } else {
        const auto pos = std::find(model.inputs().begin(), model.inputs().end(), node) - model.inputs().begin();
        out.push_back(s.host_inputs[static_cast<std::size_t>(pos)]);
      }
      continue;
    }
    const State::Slot& slot = s.slots[static_cast<std::size_t>(source.slot)];
    Tensor t(model.node(node).shape);
    if (Status st = s.devices.find(slot.device)->download(t.data.data(), s.arenas.at(slot.device).get(), slot.offset, slot.bytes);
        !st.ok()) {
      return st.error();
    }
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<Tensor>> Executable::run(const std::vector<Tensor>& inputs) {
  if (Status st = set_inputs(inputs); !st.ok()) return st.error();
  if (Status st = execute(); !st.ok()) return st.error();
  return outputs();
}

const std::vector<StepInfo>& Executable::steps() const { return state_->infos; }
const std::vector<ArenaStats>& Executable::memory() const { return state_->memory; }
const std::vector<std::string>& Executable::notes() const { return state_->notes; }

std::vector<SegmentInfo> Executable::segments() const {
  std::vector<SegmentInfo> out;
  for (const State::Segment& segment : state_->segments) {
    out.push_back(SegmentInfo{segment.first, segment.end, state_->infos[segment.first].device, segment.device != nullptr});
  }
  return out;
}

}  // namespace tc
