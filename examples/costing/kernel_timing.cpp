#include "costing/kernel_timing.hpp"

#include <random>

#include "runtime/cpu_state.hpp"

namespace tc {

collage::Result<collage::Measurement> time_function(const Function& function, const Backend& backend, Device& device,
                                                    const KernelTimingOptions& options) {
  collage::Result<std::unique_ptr<Kernel>> kernel = backend.compile(function, device);
  if (!kernel.ok()) return kernel.error();
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<OwnedBuffer> buffers;
  std::vector<const float*> inputs;
  std::vector<float*> outputs;
  for (int in : function.graph.inputs()) {
    const std::size_t n = static_cast<std::size_t>(numel(function.graph.node(in).shape));
    std::vector<float> values(n);
    for (float& v : values) v = dist(rng);
    collage::Result<OwnedBuffer> b = allocate_owned(device, n * sizeof(float));
    if (!b.ok()) return b.error();
    if (collage::Status s = device.upload(b->get(), 0, values.data(), n * sizeof(float)); !s.ok()) return s.error();
    inputs.push_back(b->floats());
    buffers.push_back(std::move(b).value());
  }
  for (int out : function.graph.outputs()) {
    const std::size_t n = static_cast<std::size_t>(numel(function.graph.node(out).shape));
    collage::Result<OwnedBuffer> b = allocate_owned(device, n * sizeof(float));
    if (!b.ok()) return b.error();
    outputs.push_back(b->floats());
    buffers.push_back(std::move(b).value());
  }
  collage::Status failure;
  auto run = [&] {
    if (!failure.ok()) return;
    if (device.kind() == DeviceKind::cpu) clear_vector_upper_state();
    if (collage::Status s = (*kernel)->run(inputs, outputs); !s.ok()) {
      failure = s;
      return;
    }
    if (collage::Status s = device.synchronize(); !s.ok()) failure = s;
  };
  run();  // a first run outside the timer, so a failing kernel is not timed
  if (!failure.ok()) return failure.error();
  collage::TimingOptions timing = options.timing;
  if (options.cold_caches && device.kind() == DeviceKind::cpu) timing.before_each = [] { evict_caches(); };
  collage::Measurement m = collage::time_run(run, timing);
  if (!failure.ok()) return failure.error();
  m.cost = collage::Cost::value(m.cost.raw() * 1e3);
  return m;
}

}  // namespace tc
