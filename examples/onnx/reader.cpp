#include "onnx/reader.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <onnx/defs/schema.h>

#include "onnx/definitions.hpp"
#include "onnx/folding.hpp"
#include "onnx/functions.hpp"
#include "onnx/node_order.hpp"
#include "onnx/proto_node.hpp"
#include "onnx/proto_tensor.hpp"
#include "onnx/resize.hpp"
#include "onnx/wire.hpp"
#include "tensor/op_attrs.hpp"
#include "tensor/reference.hpp"
#include "tensor/shape.hpp"
#include "tensor/shape_inference.hpp"

namespace tc {

namespace {

using collage::Error;
using collage::ErrorCode;
using collage::Result;
using collage::Status;
using detail::NodeAttrs;
using Ints = std::vector<std::int64_t>;

using detail::kMaxOpset;
/// The most slices a Gather (GatherElements, GatherND) at load-time indices becomes before it is
/// the IR's gather: a Concat of many slices of one value multiplies the fusion candidates (14
/// slices of one Relu already take native's combine rule to its 10 s budget).
constexpr std::size_t kMaxGatherSlices = 4;

/// The longest axis a Resize may produce (its taps are built at load time).
constexpr std::int64_t kMaxResizedDim = std::int64_t{1} << 24;

Error invalid(const std::string& message) { return Error{ErrorCode::invalid_argument, message}; }
Error unsupported(const std::string& what) { return invalid(what + " is not supported"); }
/// An element type other than float32 where the IR needs a tensor it computes with.
Error not_float32(const std::string& what, ElemType type) {
  return invalid(what + ": element type " + elem_type_name(type) + " is not supported (the IR computes float32)");
}

/// The default fold limit: a quarter of the memory available now (MemAvailable, else the free
/// physical pages) in 8-byte elements, the widest a folded constant holds.
std::int64_t memory_fold_limit() {
  std::int64_t bytes = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::int64_t kilobytes = 0;
  while (meminfo >> key >> kilobytes) {
    if (key == "MemAvailable:") {
      bytes = kilobytes * 1024;
      break;
    }
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  if (bytes <= 0) bytes = static_cast<std::int64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  return std::max<std::int64_t>(bytes / 4 / 8, std::int64_t{1} << 20);
}

/// A file mapped read-only (parsing from the page cache saves a copy of the whole model, which
/// costs a page fault per 4 KiB on first touch); empty when it cannot be mapped.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = p;
        size_ = static_cast<std::size_t>(st.st_size);
        ::madvise(p, size_, MADV_SEQUENTIAL);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool mapped() const { return data_ != nullptr; }
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

/// A value of the model: produced at run time by an IR node, or known at load time.
struct Value {
  int node = -1;                         ///< the IR node holding it, once it has one
  std::shared_ptr<OnnxTensor> constant;  ///< its value when known at load time (until moved into the node)
  /// The element type a run-time value has in the model (the IR node holds its values as float32:
  /// integers only where they come from an integer graph input).
  ElemType type = ElemType::float32;
  /// The integer graph input whose values it holds unchanged (through reshapes, Expand, casts,
  /// gathers and products with ones), or -1: the one a Gather with these indices bounds.
  int integer_input = -1;
};

/// Whether operand `k` of ONNX operator `op` may be a run-time integer tensor: the IR holds those
/// as float32 copies of an integer input, so only operators that move them unchanged, cast them,
/// read their shape or index with them take one.
bool takes_runtime_integers(const std::string& op, std::size_t k) {
  if (op == "Shape" || op == "Size" || op == "Gather") return true;
  if (op == "CastLike") return true;
  return k == 0 && (op == "Identity" || op == "Dropout" || op == "Cast" || op == "Reshape" || op == "Squeeze" ||
                    op == "Unsqueeze" || op == "Flatten" || op == "Transpose" || op == "Expand");
}

/// Operators whose output 0 holds values of their operand 0 (and so its integer input).
bool keeps_values(const std::string& op) {
  return op == "Gather" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" || op == "Transpose" ||
         op == "Expand";
}

/// Reads one model into a Graph. Every ONNX value name maps to a Value; IR nodes are named after
/// the values they produce.
class Importer {
 public:
  explicit Importer(const ReadOptions& options)
      : options_(options), fold_limit_(options.max_folded_elements > 0 ? options.max_folded_elements : memory_fold_limit()) {}

  /// Reads `model`; `raw_data` holds the initializers' raw_data when it was cut out before parsing.
  Result<Graph> run(const ::onnx::ModelProto& model, const std::vector<std::optional<std::string_view>>& raw_data) {
    raw_data_ = &raw_data;
    if (Status s = read_opset(model); !s.ok()) return s.error();
    const ::onnx::GraphProto& g = model.graph();
    reserve_names(g);
    if (Status s = read_initializers(g); !s.ok()) return s.error();
    if (Status s = read_inputs(g); !s.ok()) return s.error();
    count_uses(g);
    for (const ::onnx::NodeProto& node : g.node()) {
      if (Status s = read_node(node); !s.ok()) {
        return Error{s.code(), "node '" + detail::node_name(node) + "' (" + node.op_type() + "): " + s.message()};
      }
    }
    for (const auto& [input, bound] : index_bounds_) {
      InputDomain domain = input_domain(graph_.node(input));
      domain.index_bound = bound;
      set_input_domain(graph_.mutable_node(input), domain);
    }
    return finish(g);
  }

 private:
  // -------------------------------------------------------------------------------------------
  // The model around the nodes.

  Status read_opset(const ::onnx::ModelProto& model) {
    for (const ::onnx::OperatorSetIdProto& id : model.opset_import()) {
      if (id.domain().empty() || id.domain() == "ai.onnx") opset_ = static_cast<int>(std::min<std::int64_t>(id.version(), 1 << 20));
    }
    if (opset_ > kMaxOpset) {
      return unsupported("model: opset " + std::to_string(opset_) + " (the reader reads opsets up to " +
                         std::to_string(kMaxOpset) + ")");
    }
    return Status::success();
  }

  void reserve_names(const ::onnx::GraphProto& g) {
    for (const auto& t : g.initializer()) reserved_.insert(t.name());
    for (const auto& v : g.input()) reserved_.insert(v.name());
    for (const auto& node : g.node()) {
      for (const std::string& out : node.output()) reserved_.insert(out);
    }
  }

  void count_uses(const ::onnx::GraphProto& g) {
    for (const auto& node : g.node()) {
      for (const std::string& in : node.input()) ++uses_[in];
    }
    for (const auto& v : g.output()) ++uses_[v.name()];
  }

  bool used(const std::string& name) const { return !name.empty() && uses_.count(name) != 0; }

  /// The bytes of `t`'s external data (ONNX's keys: location, offset, length) in its file under
  /// options_.external_data_dir, which stays mapped until the read ends.
  Result<std::string_view> external_bytes(const ::onnx::TensorProto& t) {
    std::string location;
    std::uint64_t offset = 0;
    std::optional<std::uint64_t> length;
    for (const ::onnx::StringStringEntryProto& entry : t.external_data()) {
      if (entry.key() == "location") {
        location = entry.value();
      } else if (entry.key() == "offset" || entry.key() == "length") {
        std::uint64_t n = 0;
        const char* end = entry.value().data() + entry.value().size();
        const auto [at, error] = std::from_chars(entry.value().data(), end, n);
        if (error != std::errc() || at != end) {
          return Error{ErrorCode::parse, "external data: " + entry.key() + " '" + entry.value() + "' is not a byte count"};
        }
        if (entry.key() == "offset") offset = n;
        else length = n;
      }
    }
    if (location.empty()) return Error{ErrorCode::parse, "external data names no location"};
    if (location.front() == '/' || ("/" + location + "/").find("/../") != std::string::npos) {
      return Error{ErrorCode::invalid_argument, "external data location '" + location + "' leaves the model's folder"};
    }
    if (options_.external_data_dir.empty()) {
      return Error{ErrorCode::invalid_argument, "external data in '" + location + "' needs the model's folder (read the model from its file)"};
    }
    std::unique_ptr<MappedFile>& file = external_files_[location];
    const std::string path = options_.external_data_dir + "/" + location;
    if (!file) file = std::make_unique<MappedFile>(path);
    if (!file->mapped()) return Error{ErrorCode::io, "external data file " + path + " cannot be read"};
    const std::string_view bytes = file->bytes();
    if (offset > bytes.size() || (length && *length > bytes.size() - offset)) {
      return Error{ErrorCode::parse, "external data: bytes " + std::to_string(offset) + " to " +
                                         (length ? std::to_string(offset + *length) : std::string("the end")) +
                                         " lie outside " + path + " (" + std::to_string(bytes.size()) + " bytes)"};
    }
    return bytes.substr(static_cast<std::size_t>(offset), length ? static_cast<std::size_t>(*length) : std::string_view::npos);
  }

  Status read_initializers(const ::onnx::GraphProto& g) {
    for (int k = 0; k < g.initializer_size(); ++k) {
      const ::onnx::TensorProto& t = g.initializer(k);
      const auto index = static_cast<std::size_t>(k);
      std::optional<std::string_view> raw = index < raw_data_->size() ? (*raw_data_)[index] : std::nullopt;
      if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
        Result<std::string_view> bytes = external_bytes(t);
        if (!bytes.ok()) return Error{bytes.error().code, "initializer '" + t.name() + "': " + bytes.error().message};
        raw = *bytes;
      }
      Result<OnnxTensor> value = detail::tensor_from_proto(t, raw);
      if (!value.ok()) return Error{value.error().code, "initializer '" + t.name() + "': " + value.error().message};
      if (t.name().empty()) return Error{ErrorCode::parse, "an initializer has no name"};
      bind_constant(t.name(), std::move(value).value());
    }
    for (const ::onnx::SparseTensorProto& t : g.sparse_initializer()) {
      return unsupported("sparse initializer '" + t.values().name() + "'");
    }
    return Status::success();
  }

  Status read_inputs(const ::onnx::GraphProto& g) {
    if (Status s = check_shapes_given(g); !s.ok()) return s;
    std::size_t position = 0;  // among the run-time inputs
    for (const ::onnx::ValueInfoProto& input : g.input()) {
      const std::string& name = input.name();
      if (name.empty()) return Error{ErrorCode::parse, "a graph input has no name"};
      if (values_.count(name) != 0) continue;  // an initializer listed as an input (IR version < 4)
      if (auto bound = options_.input_values.find(name); bound != options_.input_values.end()) {
        if (bound->second.size() != numel(bound->second.shape)) {
          return invalid("input '" + name + "': the given value does not match its shape");
        }
        bind_constant(name, bound->second);
        continue;
      }
      if (!input.type().has_tensor_type()) return unsupported("input '" + name + "': a type other than a tensor");
      const ::onnx::TypeProto::Tensor& type = input.type().tensor_type();
      const auto elem = static_cast<ElemType>(type.elem_type());
      if (elem != ElemType::float32 && !is_integer_type(elem)) {
        return not_float32("input '" + name + "'", elem);
      }
      const Shape* in_order = position < options_.input_shapes_in_order.size() ? &options_.input_shapes_in_order[position] : nullptr;
      ++position;
      Shape shape;
      if (auto given = options_.input_shapes.find(name); given != options_.input_shapes.end()) {
        shape = given->second;
      } else if (!type.has_shape()) {
        if (in_order == nullptr) {
          return invalid("input '" + name + "': its shape is unknown (ReadOptions::input_shapes gives it; collage-run --input-shape " + name + "=D1,D2,...)");
        }
        shape = *in_order;
      } else {
        if (in_order != nullptr && in_order->size() != static_cast<std::size_t>(type.shape().dim_size())) {
          return invalid("input '" + name + "': the given shape " + to_string(*in_order) + " has another rank than the model's");
        }
        for (int axis = 0; axis < type.shape().dim_size(); ++axis) {
          const auto& dim = type.shape().dim(axis);
          const std::int64_t given = in_order != nullptr ? (*in_order)[static_cast<std::size_t>(axis)] : -1;
          if (dim.has_dim_value()) {
            if (in_order != nullptr && given != dim.dim_value()) {
              return invalid("input '" + name + "': the given shape " + to_string(*in_order) + " differs from the model's size " +
                             std::to_string(dim.dim_value()) + " on axis " + std::to_string(axis));
            }
            shape.push_back(dim.dim_value());
          } else if (auto p = options_.dim_params.find(dim.dim_param()); dim.has_dim_param() && p != options_.dim_params.end()) {
            shape.push_back(p->second);
          } else if (in_order != nullptr) {
            if (dim.has_dim_param()) {
              auto [bound, is_new] = dims_in_order_.emplace(dim.dim_param(), given);
              if (!is_new && bound->second != given) {
                return invalid("input '" + name + "': dimension '" + dim.dim_param() + "' is " + std::to_string(given) +
                               " in its given shape but " + std::to_string(bound->second) + " in an earlier input's");
              }
            }
            shape.push_back(given);
          } else if (auto b = dims_in_order_.find(dim.dim_param()); dim.has_dim_param() && b != dims_in_order_.end()) {
            shape.push_back(b->second);  // sized by an earlier input's given shape
          } else {
            const std::string how = dim.has_dim_param() ? "--dim " + dim.dim_param() + "=SIZE" : "--input-shape " + name + "=D1,D2,...";
            return invalid("input '" + name + "': dynamic " +
                           (dim.has_dim_param() ? "dimension '" + dim.dim_param() + "'" : "axis " + std::to_string(axis)) +
                           " has no size (ReadOptions::dim_params or input_shapes give it; collage-run " + how + ")");
          }
        }
      }
      if (!detail::checked_numel(shape)) return invalid("input '" + name + "': shape " + to_string(shape) + " is negative or too large");
      const int node = graph_.add_input(name, shape);
      values_[name] = Value{node, nullptr, elem, elem == ElemType::float32 ? -1 : node};
      if (elem != ElemType::float32) set_input_domain(graph_.mutable_node(node), InputDomain{static_cast<std::int64_t>(elem), 0});
    }
    return Status::success();
  }

  /// An error when options_.input_shapes names a value that is not a run-time input (an
  /// initializer, a value given in input_values, a misspelt name), listing those there are.
  Status check_shapes_given(const ::onnx::GraphProto& g) const {
    std::set<std::string> run_time;
    std::string listed;
    for (const ::onnx::ValueInfoProto& input : g.input()) {
      if (values_.count(input.name()) != 0 || options_.input_values.count(input.name()) != 0) continue;
      if (run_time.insert(input.name()).second) listed += (listed.empty() ? "'" : ", '") + input.name() + "'";
    }
    for (const auto& [name, shape] : options_.input_shapes) {
      if (run_time.count(name) == 0) {
        return invalid("a shape is given for '" + name + "', which is not a run-time input of the model (" +
                       (listed.empty() ? std::string("it has none") : listed) + ")");
      }
    }
    return Status::success();
  }

  /// The graph of the live nodes (every input stays), outputs marked, shapes inferred.
  Result<Graph> finish(const ::onnx::GraphProto& g) {
    std::vector<int> outputs;
    for (const ::onnx::ValueInfoProto& out : g.output()) {
      auto it = values_.find(out.name());
      if (it == values_.end()) return Error{ErrorCode::parse, "output '" + out.name() + "' is not produced by the graph"};
      const ElemType type = it->second.node < 0 ? it->second.constant->type : it->second.type;
      if (type != ElemType::float32) return not_float32("output '" + out.name() + "'", type);
      Result<int> n = node_of(out.name());
      if (!n.ok()) return n.error();
      outputs.push_back(*n);
    }
    std::vector<bool> live(graph_.size(), false);
    for (int n : outputs) live[static_cast<std::size_t>(n)] = true;
    for (std::size_t i = graph_.size(); i-- > 0;) {
      if (!live[i]) continue;
      for (int in : graph_.node(static_cast<int>(i)).inputs) live[static_cast<std::size_t>(in)] = true;
    }
    Graph out;
    std::vector<int> remap(graph_.size(), -1);
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      const Node& node = graph_.node(static_cast<int>(i));
      if (node.op == Op::input) {
        remap[i] = out.add_input(node.name, node.shape);
        out.mutable_node(remap[i]).attrs = node.attrs;
      } else if (live[i] && node.op == Op::constant) {
        remap[i] = out.add_constant(node.name, node.value);
      } else if (live[i]) {
        std::vector<int> inputs;
        for (int in : node.inputs) inputs.push_back(remap[static_cast<std::size_t>(in)]);
        Result<int> n = out.add_op(node.op, std::move(inputs), node.attrs, node.name);
        if (!n.ok()) return Error{ErrorCode::internal, n.error().message};
        out.mutable_node(*n).shape = node.shape;
        remap[i] = *n;
      }
    }
    for (int n : outputs) out.add_output(remap[static_cast<std::size_t>(n)]);
    if (Status s = infer_shapes(out); !s.ok()) return s.error();
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Values.

  void bind_constant(const std::string& name, OnnxTensor value) {
    values_[name] = Value{-1, std::make_shared<OnnxTensor>(std::move(value))};
  }

  /// A fresh value name starting with `base`, used by no value of the model.
  std::string fresh_name(const std::string& base) {
    for (int k = 0;; ++k) {
      std::string name = base + "/" + std::to_string(k);
      if (reserved_.insert(name).second) return name;
    }
  }

  const Value* find(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }

  Shape shape_of(const Value& v) const { return v.constant ? v.constant->shape : graph_.node(v.node).shape; }

  /// The IR node of value `name`, adding a constant node for a load-time float32 value. A value
  /// with one reader and no other name (a weight) moves into the node instead of being copied.
  Result<int> node_of(const std::string& name) {
    Value& v = values_[name];
    if (v.node >= 0) return v.node;
    if (v.constant->type != ElemType::float32) {
      return not_float32("operand '" + name + "' of an operator computed at run time", v.constant->type);
    }
    if (uses_[name] == 1 && v.constant.use_count() == 1) {
      v.node = graph_.add_constant(name, Tensor(v.constant->shape, std::move(v.constant->reals)));
      v.constant = nullptr;
    } else {
      v.node = graph_.add_constant(name, Tensor(v.constant->shape, v.constant->reals));
    }
    return v.node;
  }

  /// Adds IR operator `op` over the values `inputs` as value `out`. When every input is known at
  /// load time and the work is small, the result is folded instead (data movement on any element
  /// type, everything else through the reference interpreter on floats).
  Status emit(Op op, const std::vector<std::string>& inputs, Attributes attrs, const std::string& out) {
    bool all_constant = true;
    for (const std::string& in : inputs) all_constant = all_constant && values_[in].constant != nullptr;
    if (all_constant) {
      Result<bool> folded = fold(op, inputs, attrs, out);
      if (!folded.ok()) return folded.error();
      if (*folded) return Status::success();
    }
    std::vector<int> ids;
    for (const std::string& in : inputs) {
      Result<int> id = node_of(in);
      if (!id.ok()) return id.error();
      ids.push_back(*id);
    }
    Result<int> n = graph_.add_op(op, std::move(ids), std::move(attrs), out);
    if (!n.ok()) return n.error();
    if (Status s = infer_node_shape(graph_, *n); !s.ok()) return strip_ir_prefix(graph_, s.error(), *n);
    if (!detail::checked_numel(graph_.node(*n).shape)) {
      return invalid("the result shape " + to_string(graph_.node(*n).shape) + " is too large");
    }
    values_[out] = Value{*n, nullptr};
    return Status::success();
  }

  /// The IR's message without its own "node 'x' (Op): " (the reader names the ONNX node).
  static Error strip_ir_prefix(const Graph& g, const Error& e, int n) {
    const std::string prefix = describe(g, n) + ": ";
    if (e.message.rfind(prefix, 0) == 0) return Error{e.code, e.message.substr(prefix.size())};
    return e;
  }

  /// Folds `op` over load-time `inputs` into value `out`: true when folded, false when it is left
  /// for run time (too much work or too large a result).
  Result<bool> fold(Op op, const std::vector<std::string>& inputs, const Attributes& attrs, const std::string& out) {
    // Shape inference on a scratch graph gives the result's size and canonical attributes first.
    Graph scratch;
    std::vector<int> ids;
    for (const std::string& in : inputs) ids.push_back(scratch.add_input(in, values_[in].constant->shape));
    Result<int> n = scratch.add_op(op, ids, attrs, out);
    if (!n.ok()) return n.error();
    if (Status s = infer_node_shape(scratch, *n); !s.ok()) return strip_ir_prefix(scratch, s.error(), *n);
    const Node& node = scratch.node(*n);
    const std::optional<std::int64_t> size = detail::checked_numel(node.shape, fold_limit_);
    if (!size || work(scratch, *n) > options_.max_fold_work) return false;
    std::vector<const OnnxTensor*> args;
    for (const std::string& in : inputs) args.push_back(values_[in].constant.get());
    if (detail::moves_data(op)) {
      Result<OnnxTensor> moved = detail::move_data(node, args);
      if (!moved.ok()) return moved.error();
      bind_constant(out, std::move(moved).value());
      return true;
    }
    std::vector<Tensor> floats;
    for (const OnnxTensor* a : args) {
      if (!is_real_type(a->type)) return unsupported(std::string(op_name(op)) + " of " + elem_type_name(a->type) + " constants");
      floats.emplace_back(a->shape, a->reals);
    }
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : floats) ptrs.push_back(&t);
    Result<Tensor> value = evaluate_node(node, ptrs);
    if (!value.ok()) return value.error();
    OnnxTensor result = from_float32(*value);
    result.type = args.empty() ? ElemType::float32 : args[0]->type;
    bind_constant(out, std::move(result));
    return true;
  }

  /// The product of max(d, 1) over `dims`, saturating at INT64_MAX: the iterations of loops over
  /// them, empty dimensions included.
  static std::int64_t extent(const Shape& dims) {
    std::int64_t n = 1;
    for (std::int64_t d : dims) {
      const std::int64_t e = std::max<std::int64_t>(d, 1);
      if (n > std::numeric_limits<std::int64_t>::max() / e) return std::numeric_limits<std::int64_t>::max();
      n *= e;
    }
    return n;
  }

  /// An upper bound of the loop iterations the reference interpreter spends on inferred node `n`
  /// of `g`: the output's loops times the reduction's for the anchors, the elements of the output
  /// and the inputs otherwise.
  static std::int64_t work(const Graph& g, int n) {
    const Node& node = g.node(n);
    const auto in_shape = [&](std::size_t k) -> const Shape& { return g.node(node.inputs[k]).shape; };
    Shape loops = node.shape;
    switch (node.op) {
      case Op::conv: loops.insert(loops.end(), in_shape(1).begin() + 1, in_shape(1).end()); break;
      case Op::gemm: loops.push_back(node.attrs.get_int("trans_a") != 0 ? in_shape(0)[0] : in_shape(0)[1]); break;
      case Op::matmul: loops.push_back(in_shape(0).back()); break;
      case Op::max_pool:
      case Op::average_pool: {
        const Shape kernel = node.attrs.get_ints("kernel_shape");
        loops.insert(loops.end(), kernel.begin(), kernel.end());
        break;
      }
      default: {
        std::int64_t total = extent(loops);
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
          total = std::min(total, std::numeric_limits<std::int64_t>::max() - extent(in_shape(k))) + extent(in_shape(k));
        }
        return total;
      }
    }
    return extent(loops);
  }

  // -------------------------------------------------------------------------------------------
  // Nodes.

  /// Finds the version of the node's definition (since_), which must be one the reader reads.
  Status check_definition(const ::onnx::NodeProto& node) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") return unsupported("domain '" + node.domain() + "'");
    if (opset_ <= 0) return Error{ErrorCode::parse, "the model imports no opset of the default ONNX domain"};
    Result<int> version = detail::definition_version(node.op_type(), opset_);
    if (!version.ok()) return version.error();
    since_ = *version;
    return Status::success();
  }

  Status read_node(const ::onnx::NodeProto& node) {
    if (Status s = check_definition(node); !s.ok()) return s;
    for (const std::string& out : node.output()) {
      if (!out.empty() && values_.count(out) != 0) return Error{ErrorCode::parse, "value '" + out + "' is defined twice"};
    }
    inputs_.clear();
    for (int k = 0; k < node.input_size(); ++k) {
      const std::string& in = node.input(k);
      if (!in.empty() && find(in) == nullptr) return Error{ErrorCode::parse, "input '" + in + "' is not defined before it is used"};
      inputs_.push_back(in);
    }
    const std::string& op = node.op_type();
    if (!detail::folds(op) && !lowers(op)) return unsupported("operator " + op);
    for (std::size_t k = 0; k < inputs_.size(); ++k) {
      const Value* v = inputs_[k].empty() ? nullptr : find(inputs_[k]);
      // (A load-time operand computed at run time is named as such where it is read.)
      if (v != nullptr && !v->constant && v->type != ElemType::float32 && !takes_runtime_integers(op, k) &&
          !is_load_time_operand(op, k)) {
        return invalid("input " + std::to_string(k) + " ('" + inputs_[k] + "') is a run-time " + elem_type_name(v->type) +
                       " tensor: the IR computes float32, and run-time integers may only reach Gather, Cast, reshapes and Expand");
      }
    }
    const bool recurrent_op = op == "RNN" || op == "GRU" || op == "LSTM";  // Y, their output 0, is often left out
    if (node.output_size() == 0 || (node.output(0).empty() && !recurrent_op) ||
        std::all_of(node.output().begin(), node.output().end(), [](const std::string& o) { return o.empty(); })) {
      return Error{ErrorCode::parse, "output 0 has no name"};
    }
    if (op == "Shape" || op == "Size") return shape_or_size(node);
    if (op == "Identity" || op == "Dropout") return pass_through(node);
    if ((op == "Cast" || op == "CastLike") && !all_inputs_constant()) return runtime_cast(node);
    if (all_inputs_constant()) {
      std::vector<const OnnxTensor*> args;
      for (const std::string& in : inputs_) args.push_back(in.empty() ? nullptr : values_[in].constant.get());
      Result<std::optional<std::vector<OnnxTensor>>> folded = detail::fold_onnx_node(node, since_, args, fold_limit_);
      if (!folded.ok()) return folded.error();
      if (*folded) {
        for (std::size_t k = 0; k < (*folded)->size() && k < static_cast<std::size_t>(node.output_size()); ++k) {
          if (!node.output(static_cast<int>(k)).empty()) bind_constant(node.output(static_cast<int>(k)), std::move((**folded)[k]));
        }
        return only_outputs(node, (*folded)->size());
      }
    }
    // An integer input's numbers times ones (an Expand as the writer writes it) stay its numbers.
    const int kept_input = op == "Mul" ? integer_input_times_ones() : -1;
    if (Status s = lower(node); !s.ok()) return s;
    auto produced = values_.find(node.output(0));
    if (produced == values_.end()) return Status::success();  // a recurrent operator's Y left out
    Value& result = produced->second;
    if (keeps_values(op) && result.node >= 0) {
      const Value& from = *find(input(0));
      result.type = from.type;
      result.integer_input = from.integer_input;
    } else if (kept_input >= 0 && result.node >= 0) {
      result.integer_input = kept_input;
    }
    return Status::success();
  }

  /// For a Mul of the current node: the integer input whose numbers one operand holds when the
  /// other is a load-time tensor of ones; -1 otherwise.
  int integer_input_times_ones() const {
    for (std::size_t k = 0; k < 2 && inputs_.size() == 2; ++k) {
      const Value* numbers = find(input(k));
      const Value* ones = find(input(1 - k));
      if (numbers == nullptr || ones == nullptr || numbers->integer_input < 0 || !ones->constant) continue;
      const OnnxTensor& c = *ones->constant;
      const bool all_ones = is_real_type(c.type) ? std::all_of(c.reals.begin(), c.reals.end(), [](float v) { return v == 1.0f; })
                                                 : std::all_of(c.ints.begin(), c.ints.end(), [](std::int64_t v) { return v == 1; });
      if (all_ones) return numbers->integer_input;
    }
    return -1;
  }

  /// Operators the reader maps to the IR (beyond those it folds).
  static bool lowers(const std::string& op) {
    static const std::unordered_set<std::string> kLowered = {
        "Shape", "Size", "Identity", "Dropout", "Max", "Min", "Sum", "Mean", "Split", "Cast", "CastLike",
        "LRN", "HardSwish", "PRelu", "Gelu", "Expand", "Gather", "GatherElements", "GatherND", "Where", "Resize", "Upsample",
        "Elu", "Selu", "Celu", "Softplus", "Softsign", "Mish", "ThresholdedRelu", "Shrink", "LogSoftmax", "Hardmax", "ReduceMin", "ReduceL1", "ReduceL2",
        "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ReduceProd", "LpNormalization", "MeanVarianceNormalization",
        "InstanceNormalization", "RMSNormalization", "RotaryEmbedding", "Attention", "Swish", "DepthToSpace", "SpaceToDepth", "Tile", "Einsum", "ConvTranspose", "RNN",
        "GRU", "LSTM"};
    const std::optional<Op> ir = op_from_name(op);
    return (ir && *ir != Op::input && *ir != Op::constant) || kLowered.count(op) != 0;
  }

  bool all_inputs_constant() const {
    return std::all_of(inputs_.begin(), inputs_.end(), [&](const std::string& in) { return in.empty() || find(in)->constant; });
  }

  /// Fails when an output from `count` on is used (an optional output the reader does not produce).
  Status only_outputs(const ::onnx::NodeProto& node, std::size_t count) const {
    for (int k = static_cast<int>(count); k < node.output_size(); ++k) {
      if (used(node.output(k))) return unsupported("output " + std::to_string(k) + " ('" + node.output(k) + "')");
    }
    return Status::success();
  }

  /// Input `k` of the current node, or "" when absent.
  const std::string& input(std::size_t k) const {
    static const std::string none;
    return k < inputs_.size() ? inputs_[k] : none;
  }

  Status need_inputs(std::size_t count) const {
    for (std::size_t k = 0; k < count; ++k) {
      if (input(k).empty()) return Error{ErrorCode::parse, "input " + std::to_string(k) + " is missing"};
    }
    return Status::success();
  }

  /// The load-time value of optional input `k` (nullptr when absent); an error when it is computed at run time.
  Result<const OnnxTensor*> load_time(std::size_t k) const {
    if (input(k).empty()) return static_cast<const OnnxTensor*>(nullptr);
    const Value* v = find(input(k));
    if (!v->constant) {
      return unsupported("input " + std::to_string(k) + " ('" + input(k) + "') computed at run time (it must be known at load time)");
    }
    return v->constant.get();
  }

  /// The int list of optional load-time input `k`, or `fallback` when absent.
  Result<Ints> int_list_input(std::size_t k, std::optional<Ints> fallback = std::nullopt) const {
    Result<const OnnxTensor*> t = load_time(k);
    if (!t.ok()) return t.error();
    if (*t == nullptr) {
      if (fallback) return *fallback;
      return Error{ErrorCode::parse, "input " + std::to_string(k) + " is missing"};
    }
    if (!is_integer_type((*t)->type) || (*t)->shape.size() > 1) {
      return invalid("input " + std::to_string(k) + " ('" + input(k) + "') must be a 1-D integer tensor");
    }
    return (*t)->ints;
  }

  /// The single number of optional load-time input `k`, or nothing when absent.
  Result<std::optional<double>> scalar_input(std::size_t k) const {
    Result<const OnnxTensor*> t = load_time(k);
    if (!t.ok()) return t.error();
    if (*t == nullptr) return std::optional<double>();
    if ((*t)->size() != 1) return invalid("input " + std::to_string(k) + " ('" + input(k) + "') must have one element");
    return std::optional<double>(is_real_type((*t)->type) ? static_cast<double>((*t)->reals[0]) : static_cast<double>((*t)->ints[0]));
  }

  Status shape_or_size(const ::onnx::NodeProto& node) {
    if (Status s = need_inputs(1); !s.ok()) return s;
    const Shape shape = shape_of(*find(input(0)));
    OnnxTensor result;
    result.type = ElemType::int64;
    if (node.op_type() == "Size") {
      result.ints = {numel(shape)};
    } else {
      const NodeAttrs attrs(node);
      const auto rank = static_cast<std::int64_t>(shape.size());
      Result<std::int64_t> start = attrs.get_int("start", 0);
      Result<std::int64_t> end = attrs.get_int("end", rank);
      if (!start.ok()) return start.error();
      if (!end.ok()) return end.error();
      const auto clamp_axis = [&](std::int64_t a) { return std::clamp<std::int64_t>(a < 0 ? a + rank : a, 0, rank); };
      for (std::int64_t d = clamp_axis(*start); d < clamp_axis(*end); ++d) result.ints.push_back(shape[static_cast<std::size_t>(d)]);
      result.shape = {static_cast<std::int64_t>(result.ints.size())};
    }
    bind_constant(node.output(0), std::move(result));
    return only_outputs(node, 1);
  }

  /// Identity, and Dropout in inference (its mask output, when used, is not supported).
  Status pass_through(const ::onnx::NodeProto& node) {
    if (Status s = need_inputs(1); !s.ok()) return s;
    if (node.op_type() == "Dropout") {
      Result<std::optional<double>> training = scalar_input(2);
      if (!training.ok()) return training.error();
      if (training->value_or(0.0) != 0.0) return unsupported("training mode");
    }
    values_[node.output(0)] = *find(input(0));
    return only_outputs(node, 1);
  }

  /// A Cast of a run-time tensor: the IR's tensors are float32, so only a cast to float32 (a no-op)
  /// is supported.
  Status runtime_cast(const ::onnx::NodeProto& node) {
    if (Status s = need_inputs(node.op_type() == "Cast" ? 1 : 2); !s.ok()) return s;
    ElemType to = ElemType::undefined;
    if (node.op_type() == "Cast") {
      Result<std::int64_t> t = NodeAttrs(node).get_int("to", 0);
      if (!t.ok()) return t.error();
      to = static_cast<ElemType>(*t);
    } else {
      const Value& like = *find(input(1));
      to = like.constant ? like.constant->type : like.type;
    }
    const Value& x = *find(input(0));
    if (x.constant) {  // CastLike of a constant like a run-time (float32) tensor
      Result<OnnxTensor> cast = detail::cast_tensor(*x.constant, to);
      if (!cast.ok()) return cast.error();
      bind_constant(node.output(0), std::move(cast).value());
    } else if (to == ElemType::float32 || (is_integer_type(to) && to != ElemType::boolean && x.integer_input >= 0)) {
      // The values are the same numbers: float32 holds an integer input's exactly.
      Value cast = x;
      cast.type = to;
      values_[node.output(0)] = cast;
    } else {
      return unsupported("a cast of a run-time " + elem_type_name(x.type) + " tensor to " + elem_type_name(to));
    }
    return only_outputs(node, 1);
  }

  // -------------------------------------------------------------------------------------------
  // Lowering to the IR.

  Status lower(const ::onnx::NodeProto& node) {
    const std::string& op = node.op_type();
    const NodeAttrs attrs(node);
    const std::string& out = node.output(0);
    Attributes a;
    std::optional<Op> ir = op_from_name(op);
    if (op == "Max" || op == "Min" || op == "Sum" || op == "Mean") return variadic(node);
    if (op == "Split") return split(node, attrs);
    if (op == "LRN") return lrn(node, attrs);
    if (op == "HardSwish" || op == "PRelu" || op == "Gelu" || op == "Elu" || op == "Selu" || op == "Celu" ||
        op == "Softplus" || op == "Softsign" || op == "Mish" || op == "Swish" || op == "ThresholdedRelu" ||
        op == "Shrink") {
      return activation(node, attrs);
    }
    if (op == "LogSoftmax" || op == "Hardmax") return log_softmax_or_hardmax(node, attrs);
    if (op == "ReduceMin" || op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceLogSum" ||
        op == "ReduceLogSumExp" || op == "ReduceProd") {
      return composite_reduction(node, attrs);
    }
    if (op == "LpNormalization" || op == "MeanVarianceNormalization" || op == "InstanceNormalization" ||
        op == "RMSNormalization") {
      return normalization(node, attrs);
    }
    if (op == "RotaryEmbedding") return rotary_embedding(node, attrs);
    if (op == "Attention") return attention(node, attrs);
    if (op == "DepthToSpace" || op == "SpaceToDepth") return depth_space(node, attrs);
    if (op == "Tile") return tile(node);
    if (op == "Einsum") return einsum(node, attrs);
    if (op == "ConvTranspose") return conv_transpose(node, attrs);
    if (op == "RNN" || op == "GRU" || op == "LSTM") return recurrent(node, attrs);
    if (op == "Expand") return expand(node);
    if (op == "Gather") return gather(node, attrs);
    if (op == "GatherElements") return gather_elements(node, attrs);
    if (op == "GatherND") return gather_nd(node, attrs);
    if (op == "Where") return where(node);
    if (op == "Resize" || op == "Upsample") return resize(node, attrs);
    if (op == "Pad") {
      Result<std::string> mode = attrs.get_string("mode", "constant");
      if (mode.ok() && *mode == "wrap") return wrap_pad(node, attrs);
    }
    if (op == "Softmax" && since_ < 13) return legacy_softmax(node, attrs);
    if (!ir || *ir == Op::input || *ir == Op::constant) return unsupported("operator " + op);
    if (Status s = need_inputs(static_cast<std::size_t>(info(*ir).min_inputs)); !s.ok()) return s;
    std::vector<std::string> operands = {input(0)};
    Status s = Status::success();
    switch (*ir) {
      case Op::leaky_relu: s = copy_float(attrs, "alpha", a); break;
      case Op::hard_sigmoid:
        s = copy_float(attrs, "alpha", a);
        if (s.ok()) s = copy_float(attrs, "beta", a);
        break;
      case Op::clip: s = since_ < 11 ? copy_clip_attributes(attrs, a) : clip_bounds(a); break;
      case Op::pow: s = pow_exponent(operands); break;
      case Op::add: case Op::sub: case Op::mul: case Op::div: operands.push_back(input(1)); break;
      case Op::conv:
        operands = present_inputs(3);
        s = copy_ints(attrs, {"kernel_shape", "strides", "pads", "dilations"}, a);
        if (s.ok()) s = copy_int(attrs, "group", a);
        if (s.ok()) s = auto_pad(attrs, a);
        break;
      case Op::gemm:
        operands = present_inputs(3);
        s = copy_float(attrs, "alpha", a);
        if (s.ok()) s = copy_float(attrs, "beta", a);
        if (s.ok()) s = copy_int(attrs, "transA", a);
        if (s.ok()) s = copy_int(attrs, "transB", a);
        break;
      case Op::matmul: operands.push_back(input(1)); break;
      case Op::max_pool:
      case Op::average_pool:
        s = copy_ints(attrs, {"kernel_shape", "strides", "pads"}, a);
        if (s.ok()) s = *ir == Op::max_pool ? copy_ints(attrs, {"dilations"}, a) : undilated(attrs);
        if (s.ok()) s = copy_int(attrs, "ceil_mode", a);
        if (s.ok() && *ir == Op::average_pool) s = copy_int(attrs, "count_include_pad", a);
        if (s.ok()) s = auto_pad(attrs, a);
        break;
      case Op::batch_norm: {
        operands = present_inputs(5);
        Result<std::int64_t> training = attrs.get_int("training_mode", 0);
        Result<std::int64_t> spatial = attrs.get_int("spatial", 1);  // BatchNormalization-7
        if (!training.ok()) s = training.error();
        else if (!spatial.ok()) s = spatial.error();
        else if (*training != 0) s = unsupported("training mode");
        else if (*spatial != 1) s = unsupported("statistics per element (spatial = 0)");
        else s = copy_float(attrs, "epsilon", a);
        break;
      }
      case Op::layer_norm:
        operands = present_inputs(3);
        s = copy_int(attrs, "axis", a);
        if (s.ok()) s = copy_float(attrs, "epsilon", a);
        if (s.ok()) s = layer_norm_statistics(node, a);
        break;
      case Op::softmax: s = copy_int(attrs, "axis", a); break;
      case Op::reduce_mean: case Op::reduce_sum: case Op::reduce_max: return reduction(node, attrs, *ir);
      case Op::reshape: s = reshape(attrs, a); break;
      case Op::flatten: s = copy_int(attrs, "axis", a); break;
      case Op::squeeze:
      case Op::unsqueeze: s = axes_operand(attrs, a, *ir == Op::unsqueeze); break;
      case Op::transpose: s = copy_ints(attrs, {"perm"}, a); break;
      case Op::concat:
        operands = present_inputs(static_cast<std::size_t>(node.input_size()));
        if (!attrs.has("axis")) return Error{ErrorCode::parse, "Concat needs an axis"};
        s = copy_int(attrs, "axis", a);
        break;
      case Op::slice: s = since_ < 10 ? slice_attributes(attrs, a) : slice(a); break;
      case Op::pad: s = pad(attrs, a); break;
      default: break;  // unary operators without attributes
    }
    if (!s.ok()) return s;
    if (Status o = only_outputs(node, *ir == Op::layer_norm ? 3 : 1); !o.ok()) return o;
    return emit(*ir, operands, std::move(a), out);
  }

  /// LayerNormalization's optional outputs Mean and InvStdDev (over the normalised axes, kept as
  /// 1s), when used: ReduceMean(X), and 1 / Sqrt(ReduceMean((X - Mean)^2) + epsilon).
  Status layer_norm_statistics(const ::onnx::NodeProto& node, const Attributes& a) {
    const bool want_mean = node.output_size() > 1 && used(node.output(1));
    const bool want_inv_std = node.output_size() > 2 && used(node.output(2));
    if (!want_mean && !want_inv_std) return Status::success();
    const std::size_t rank = shape_of(*find(input(0))).size();
    const std::int64_t axis_attr = a.get_int("axis", -1);
    const std::optional<std::int64_t> axis = normalize_axis(axis_attr, rank);
    if (!axis) return invalid("axis " + std::to_string(axis_attr) + " out of range for rank " + std::to_string(rank));
    Attributes reduce;
    Ints axes;
    for (auto d = static_cast<std::size_t>(*axis); d < rank; ++d) axes.push_back(static_cast<std::int64_t>(d));
    reduce.set("axes", axes);
    reduce.set("keepdims", 1);
    const std::string& y = node.output(0);
    const std::string mean = want_mean ? node.output(1) : fresh_name(y);
    if (Status s = emit(Op::reduce_mean, {input(0)}, reduce, mean); !s.ok()) return s;
    if (!want_inv_std) return Status::success();
    const std::string centred = fresh_name(y), squared = fresh_name(y), variance = fresh_name(y);
    const std::string epsilon = scalar(y, a.get_float("epsilon", 1e-5));
    const std::string shifted = fresh_name(y), deviation = fresh_name(y);
    Status s = emit(Op::sub, {input(0), mean}, {}, centred);
    if (s.ok()) s = emit(Op::mul, {centred, centred}, {}, squared);
    if (s.ok()) s = emit(Op::reduce_mean, {squared}, reduce, variance);
    if (s.ok()) s = emit(Op::add, {variance, epsilon}, {}, shifted);
    if (s.ok()) s = emit(Op::sqrt, {shifted}, {}, deviation);
    if (s.ok()) s = emit(Op::reciprocal, {deviation}, {}, node.output(2));
    return s;
  }

  /// The first `count` inputs of the current node, stopping at the first absent one.
  std::vector<std::string> present_inputs(std::size_t count) const {
    std::vector<std::string> out;
    for (std::size_t k = 0; k < count && !input(k).empty(); ++k) out.push_back(input(k));
    return out;
  }

  /// Copies int attribute `name` when present (absent ones take the IR's default, which is ONNX's).
  static Status copy_int(const NodeAttrs& attrs, const std::string& name, Attributes& a) {
    if (!attrs.has(name)) return Status::success();
    Result<std::int64_t> v = attrs.get_int(name, 0);
    if (!v.ok()) return v.error();
    if (*v < -detail::kMaxDim || *v > detail::kMaxDim) return invalid("attribute '" + name + "' is out of range");
    a.set(name, *v);
    return Status::success();
  }

  /// Copies float attribute `name` when present.
  static Status copy_float(const NodeAttrs& attrs, const std::string& name, Attributes& a) {
    if (!attrs.has(name)) return Status::success();
    Result<float> v = attrs.get_float(name, 0.0f);
    if (!v.ok()) return v.error();
    a.set(name, static_cast<double>(*v));
    return Status::success();
  }

  /// Copies the int lists among `names` that are present; every entry must be within +-kMaxDim.
  static Status copy_ints(const NodeAttrs& attrs, const std::vector<std::string>& names, Attributes& a) {
    for (const std::string& name : names) {
      if (!attrs.has(name)) continue;
      Result<Ints> v = attrs.get_ints(name, {});
      if (!v.ok()) return v.error();
      for (std::int64_t x : *v) {
        if (x < -detail::kMaxDim || x > detail::kMaxDim) return invalid("attribute '" + name + "' is out of range");
      }
      a.set(name, *v);
    }
    return Status::success();
  }

  static Status auto_pad(const NodeAttrs& attrs, Attributes& a) {
    Result<std::string> mode = attrs.get_string("auto_pad", "NOTSET");
    if (!mode.ok()) return mode.error();
    if (*mode == "NOTSET") return Status::success();
    if (*mode == "SAME_UPPER") a.set("auto_pad", kSameUpper);
    else if (*mode == "SAME_LOWER") a.set("auto_pad", kSameLower);
    else if (*mode == "VALID") a.set("auto_pad", kValid);
    else return invalid("unknown auto_pad '" + *mode + "'");
    return Status::success();
  }

  Status clip_bounds(Attributes& a) const {
    for (std::size_t k = 1; k <= 2; ++k) {
      Result<std::optional<double>> bound = scalar_input(k);
      if (!bound.ok()) return bound.error();
      if (*bound) a.set(k == 1 ? "min" : "max", **bound);
    }
    return Status::success();
  }

  /// Pow's exponent; an integer one known at load time becomes a float32 constant.
  Status pow_exponent(std::vector<std::string>& operands) {
    const Value& e = *find(input(1));
    if (e.constant && is_integer_type(e.constant->type)) {
      const std::string name = fresh_name(input(1));
      OnnxTensor f;
      f.shape = e.constant->shape;
      for (std::int64_t v : e.constant->ints) f.reals.push_back(static_cast<float>(v));
      bind_constant(name, std::move(f));
      operands.push_back(name);
    } else {
      operands.push_back(input(1));
    }
    return Status::success();
  }

  Status reshape(const NodeAttrs& attrs, Attributes& a) const {
    Result<Ints> shape = int_list_input(1);
    if (!shape.ok()) return shape.error();
    // Bound the target so the IR's size arithmetic cannot overflow.
    std::int64_t known = 1;
    for (std::int64_t d : *shape) {
      if (d < -1 || d > detail::kMaxDim) return invalid("target shape " + to_string(*shape) + " is out of range");
      if (d > 0 && known > detail::kMaxElements / d) return invalid("target shape " + to_string(*shape) + " is too large");
      if (d > 0) known *= d;
    }
    a.set("shape", *shape);
    return copy_int(attrs, "allowzero", a);
  }

  /// Squeeze/Unsqueeze axes: an attribute before opset 13, an input from 13.
  /// Squeeze without axes removes every dimension of 1; Unsqueeze needs them.
  Status axes_operand(const NodeAttrs& attrs, Attributes& a, bool required) const {
    Result<Ints> axes = since_ >= 13 ? int_list_input(1, required ? std::nullopt : std::optional<Ints>(Ints{}))
                                     : attrs.get_ints("axes", {});
    if (!axes.ok()) return axes.error();
    if (!axes->empty() || required) a.set("axes", *axes);
    return Status::success();
  }

  Status slice(Attributes& a) const {
    static const char* const kNames[] = {"starts", "ends", "axes", "steps"};
    for (std::size_t k = 1; k <= 4; ++k) {
      Result<Ints> list = int_list_input(k, k <= 2 ? std::nullopt : std::optional<Ints>(Ints{}));
      if (!list.ok()) return list.error();
      if (!list->empty()) a.set(kNames[k - 1], *list);
    }
    if (!a.has("starts")) a.set("starts", Ints{});
    if (!a.has("ends")) a.set("ends", Ints{});
    return Status::success();
  }

  /// Pad: pads and value are attributes in Pad-2, inputs from Pad-11; Pad-18 may name the axes
  /// the pads are for.
  Status pad(const NodeAttrs& attrs, Attributes& a) const {
    Result<Ints> pads = pad_amounts(attrs);
    if (!pads.ok()) return pads.error();
    a.set("pads", *pads);
    Result<std::optional<double>> value = std::optional<double>();
    if (since_ < 11) {
      Result<float> v = attrs.get_float("value", 0.0f);
      if (!v.ok()) return v.error();
      value = std::optional<double>(*v);
    } else {
      value = scalar_input(2);
    }
    if (!value.ok()) return value.error();
    a.set("value", value->value_or(0.0));
    Result<std::string> mode = attrs.get_string("mode", "constant");
    if (!mode.ok()) return mode.error();
    if (*mode == "constant") a.set("mode", kPadConstant);
    else if (*mode == "reflect") a.set("mode", kPadReflect);
    else if (*mode == "edge") a.set("mode", kPadEdge);
    else return unsupported("pad mode '" + *mode + "'");
    return Status::success();
  }

  /// Pad's pads (begins then ends) for every axis: an attribute in Pad-2, an input from Pad-11,
  /// for the axes named by the optional axes input from Pad-18.
  Result<Ints> pad_amounts(const NodeAttrs& attrs) const {
    Result<Ints> pads = since_ < 11 ? attrs.get_ints("pads", {}) : int_list_input(1);
    if (!pads.ok()) return pads.error();
    for (std::int64_t p : *pads) {
      if (p < -detail::kMaxDim || p > detail::kMaxDim) return invalid("pads are out of range");
    }
    if (input(3).empty()) return pads;
    Result<Ints> axes = int_list_input(3);
    if (!axes.ok()) return axes.error();
    return pads_over_all_axes(*pads, *axes, shape_of(*find(input(0))).size());
  }

  /// Pad-19's wrap mode: along each padded axis the elements at -begin .. n + end - 1 modulo n,
  /// as slices and a concat.
  Status wrap_pad(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(2); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    Result<Ints> pads = pad_amounts(attrs);
    if (!pads.ok()) return pads.error();
    const Shape shape = shape_of(*find(input(0)));
    const std::size_t rank = shape.size();
    if (pads->size() != 2 * rank) return invalid(std::to_string(pads->size()) + " pads for rank " + std::to_string(rank));
    std::vector<std::size_t> padded;
    for (std::size_t d = 0; d < rank; ++d) {
      if ((*pads)[d] != 0 || (*pads)[rank + d] != 0) padded.push_back(d);
    }
    const std::string& out = node.output(0);
    std::string current = input(0);
    for (std::size_t k = 0; k < padded.size(); ++k) {
      const std::size_t d = padded[k];
      const std::int64_t n = shape[d], begin = (*pads)[d], end = (*pads)[rank + d];
      if (n + begin + end <= 0 || n == 0) return invalid("wrap padding " + to_string(*pads) + " of " + to_string(shape) + " leaves nothing to wrap");
      if (n + begin + end > kMaxResizedDim) return invalid("wrap padding " + to_string(*pads) + " is too large");
      Ints indices;
      for (std::int64_t i = -begin; i < n + end; ++i) indices.push_back(((i % n) + n) % n);
      const std::string next = k + 1 == padded.size() ? out : fresh_name(out);
      Result<bool> done = select_along_axis(current, d, indices, next);
      if (!done.ok()) return done.error();
      if (!*done) return unsupported("wrap padding " + to_string(*pads) + " of " + to_string(shape) + " (more than 64 slices)");
      current = next;
    }
    if (padded.empty()) values_[out] = *find(current);
    return Status::success();
  }

  /// Pads given for `axes` (begins then ends) as pads for every one of `rank` axes.
  static Result<Ints> pads_over_all_axes(const Ints& pads, const Ints& axes, std::size_t rank) {
    if (pads.size() != 2 * axes.size()) return invalid(std::to_string(pads.size()) + " pads for " + std::to_string(axes.size()) + " axes");
    Ints full(2 * rank, 0);
    for (std::size_t k = 0; k < axes.size(); ++k) {
      const std::optional<std::int64_t> axis = normalize_axis(axes[k], rank);
      if (!axis) return invalid("axis " + std::to_string(axes[k]) + " out of range for rank " + std::to_string(rank));
      full[static_cast<std::size_t>(*axis)] = pads[k];
      full[rank + static_cast<std::size_t>(*axis)] = pads[axes.size() + k];
    }
    return full;
  }

  /// Clip-6's bounds, attributes.
  static Status copy_clip_attributes(const NodeAttrs& attrs, Attributes& a) {
    Status s = copy_float(attrs, "min", a);
    return s.ok() ? copy_float(attrs, "max", a) : s;
  }

  /// Slice-1's starts, ends and axes, attributes (no steps).
  static Status slice_attributes(const NodeAttrs& attrs, Attributes& a) {
    if (!attrs.has("starts") || !attrs.has("ends")) return Error{ErrorCode::parse, "Slice needs starts and ends"};
    return copy_ints(attrs, {"starts", "ends", "axes"}, a);
  }

  /// AveragePool's dilations (from AveragePool-19), which the IR's average_pool does not have:
  /// only all 1s are read.
  static Status undilated(const NodeAttrs& attrs) {
    Result<Ints> dilations = attrs.get_ints("dilations", {});
    if (!dilations.ok()) return dilations.error();
    for (std::int64_t d : *dilations) {
      if (d != 1) return unsupported("dilations " + to_string(*dilations));
    }
    return Status::success();
  }

  /// A Reduce* node's reduction: its attributes for the IR's reductions (axes, keepdims), or
  /// nothing when it reduces no axis (empty axes with noop_with_empty_axes).
  Result<std::optional<Attributes>> reduction_attributes(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    Attributes a;
    if (Status s = copy_int(attrs, "keepdims", a); !s.ok()) return s.error();
    Result<std::int64_t> noop = attrs.get_int("noop_with_empty_axes", 0);
    if (!noop.ok()) return noop.error();
    Result<Ints> axes = detail::reduction_axes_are_input(node.op_type(), since_) ? int_list_input(1, Ints{}) : attrs.get_ints("axes", {});
    if (!axes.ok()) return axes.error();
    if (axes->empty() && *noop != 0) return std::optional<Attributes>();
    if (!axes->empty()) a.set("axes", *axes);
    return std::optional<Attributes>(std::move(a));
  }

  Status reduction(const ::onnx::NodeProto& node, const NodeAttrs& attrs, Op ir) {
    if (Status s = need_inputs(1); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    Result<std::optional<Attributes>> a = reduction_attributes(node, attrs);
    if (!a.ok()) return a.error();
    if (!*a) {
      values_[node.output(0)] = *find(input(0));
      return Status::success();
    }
    return emit(ir, {input(0)}, std::move(**a), node.output(0));
  }

  /// ReduceMin as -ReduceMax(-x), ReduceL1 as ReduceSum(|x|), ReduceL2 as Sqrt(ReduceSum(x * x)),
  /// ReduceSumSquare as ReduceSum(x * x), ReduceLogSum as Log(ReduceSum(x)), ReduceLogSumExp
  /// as m + Log(ReduceSum(Exp(x - m))) with m the maximum (no overflow for large x), and
  /// ReduceProd as Cos(pi * ReduceSum(x < 0)) * Exp(ReduceSum(Log |x|)). Reducing no
  /// axis (noop_with_empty_axes) leaves the elementwise steps alone: -(-x), |x|, Sqrt(x * x) ...
  Status composite_reduction(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(1); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    Result<std::optional<Attributes>> reduce = reduction_attributes(node, attrs);
    if (!reduce.ok()) return reduce.error();
    const std::string& op = node.op_type();
    const std::string& x = input(0);
    Steps st{*this, node.output(0)};
    const bool reduces = reduce->has_value();
    auto reduced = [&](Op o, const std::string& v, bool last) {
      if (reduces) return st.op(o, {v}, **reduce, last);
      return last ? st.op(Op::identity, {v}, {}, true) : v;
    };
    if (op == "ReduceMin") {
      st.op(Op::neg, {reduced(Op::reduce_max, st.op(Op::neg, {x}), false)}, {}, true);
    } else if (op == "ReduceL1") {
      reduced(Op::reduce_sum, st.op(Op::abs, {x}), true);
    } else if (op == "ReduceL2") {
      st.op(Op::sqrt, {reduced(Op::reduce_sum, st.op(Op::mul, {x, x}), false)}, {}, true);
    } else if (op == "ReduceSumSquare") {
      reduced(Op::reduce_sum, st.op(Op::mul, {x, x}), true);
    } else if (op == "ReduceLogSum") {
      st.op(Op::log, {reduced(Op::reduce_sum, x, false)}, {}, true);
    } else if (op == "ReduceProd" && reduces) {
      // Its sign Cos(pi * the count of negatives) times its magnitude Exp(ReduceSum(Log |x|)),
      // which is 0 when an element is (Log 0 = -inf) and NaN for 0 and inf, as the product is.
      const std::string negative = st.positive(st.op(Op::neg, {x}));
      const std::string sign = st.op(Op::cos, {st.op(Op::mul, {reduced(Op::reduce_sum, negative, false), st.scalar(3.14159265358979323846)})});
      const std::string magnitude = st.op(Op::exp, {reduced(Op::reduce_sum, st.op(Op::log, {st.op(Op::abs, {x})}), false)});
      st.op(Op::mul, {sign, magnitude}, {}, true);
    } else if (!reduces) {
      st.op(Op::identity, {x}, {}, true);
    } else {
      Attributes kept = **reduce;
      kept.set("keepdims", 1);
      const std::string peak = st.op(Op::reduce_max, {x}, kept);
      const std::string sum = st.op(Op::reduce_sum, {st.op(Op::exp, {st.op(Op::sub, {x, peak})})}, **reduce);
      const std::string peak_as_sum = st.status.ok() ? st.reshape(peak, shape_of(*find(sum))) : std::string();
      st.op(Op::add, {st.op(Op::log, {sum}), peak_as_sum}, {}, true);
    }
    return st.status;
  }

  /// x - m - Log(ReduceSum(Exp(x - m))) over `axis` with m the maximum there, as value `out`.
  Status log_softmax_over(const std::string& x, std::int64_t axis, const std::string& out) {
    Attributes over;
    over.set("axes", Ints{axis});
    over.set("keepdims", 1);
    Steps st{*this, out};
    const std::string shifted = st.op(Op::sub, {x, st.op(Op::reduce_max, {x}, over)});
    const std::string log_sum = st.op(Op::log, {st.op(Op::reduce_sum, {st.op(Op::exp, {shifted})}, over)});
    st.op(Op::sub, {shifted, log_sum}, {}, true);
    return st.status;
  }

  /// 1 at the first maximum of `x` along `axis`, 0 elsewhere, as value `out`: with m the
  /// maximum, the maxima are where 1 - Sign(m - x) is 1; weighted by n - their index along the
  /// axis (distinct, exact in float32), the first has the largest weight, found by the same test.
  /// (A row of -inf gives NaN: -inf - -inf.)
  Status hardmax_over(const std::string& x, std::int64_t axis, const std::string& out) {
    const Shape shape = shape_of(*find(x));
    const std::int64_t n = shape[static_cast<std::size_t>(axis)];
    if (n > (std::int64_t{1} << 24)) return unsupported("a Hardmax over " + std::to_string(n) + " elements");
    Attributes over;
    over.set("axes", Ints{axis});
    over.set("keepdims", 1);
    Steps st{*this, out};
    auto largest = [&](const std::string& v, bool last) {  // 1 where v is its maximum along the axis
      const std::string peak = st.op(Op::reduce_max, {v}, over);
      return st.op(Op::sub, {st.scalar(1), st.op(Op::sign, {st.op(Op::sub, {peak, v})})}, {}, last);
    };
    Shape weights_shape(shape.size() - static_cast<std::size_t>(axis), 1);  // [n, 1, ...]: broadcast along the axis
    weights_shape[0] = n;
    Tensor weights(weights_shape);
    for (std::int64_t i = 0; i < n; ++i) weights.data[static_cast<std::size_t>(i)] = static_cast<float>(n - i);
    largest(st.op(Op::mul, {largest(x, false), constant(out, from_float32(weights))}), true);
    return st.status;
  }

  /// LogSoftmax or Hardmax over one axis (opset 13 on), or before opset 13 over the input coerced
  /// to 2-D at `axis` (default 1), as legacy_softmax.
  Status log_softmax_or_hardmax(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(1); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    const Shape shape = shape_of(*find(input(0)));
    const bool legacy = since_ < 13;
    Result<std::int64_t> axis_attr = attrs.get_int("axis", legacy ? 1 : -1);
    if (!axis_attr.ok()) return axis_attr.error();
    const auto rank = static_cast<std::int64_t>(shape.size());
    const std::int64_t axis = *axis_attr < 0 ? *axis_attr + rank : *axis_attr;
    if (axis < 0 || axis > rank || (axis == rank && !legacy) || shape.empty()) {
      return invalid("axis " + std::to_string(*axis_attr) + " out of range for " + to_string(shape));
    }
    const std::string& out = node.output(0);
    const auto over = node.op_type() == "Hardmax" ? &Importer::hardmax_over : &Importer::log_softmax_over;
    if (!legacy || axis == rank - 1) return (this->*over)(input(0), legacy ? rank - 1 : axis, out);
    const auto a = static_cast<std::size_t>(axis);
    Steps st{*this, out};
    const std::string flat = st.reshape(input(0), {product(shape, 0, a), product(shape, a, shape.size())});
    const std::string normalised = fresh_name(out);
    if (Status s = st.status.ok() ? (this->*over)(flat, 1, normalised) : st.status; !s.ok()) return s;
    st.reshape(normalised, shape, true);
    return st.status;
  }

  /// LpNormalization (x over its L1 or L2 norm along `axis`), MeanVarianceNormalization
  /// ((x - mean) / (standard deviation + 1e-9) over `axes`, default [0, 2, 3]) and
  /// InstanceNormalization (each channel of each sample to mean 0 and variance 1 over its spatial
  /// axes, then scale[c] * it + B[c]) and RMSNormalization (x over the root of its mean square plus
  /// epsilon, over the axes from `axis` on, times scale).
  Status normalization(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    const std::string& op = node.op_type();
    if (Status s = need_inputs(op == "InstanceNormalization" ? 3 : op == "RMSNormalization" ? 2 : 1); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    const std::string& x = input(0);
    const Shape shape = shape_of(*find(x));
    const auto rank = static_cast<std::int64_t>(shape.size());
    Ints axes;
    if (op == "LpNormalization") {
      Result<std::int64_t> axis = attrs.get_int("axis", -1);
      if (!axis.ok()) return axis.error();
      axes = {*axis};
    } else if (op == "MeanVarianceNormalization") {
      Result<Ints> given = attrs.get_ints("axes", {0, 2, 3});
      if (!given.ok()) return given.error();
      axes = *given;
    } else if (op == "RMSNormalization") {
      Result<std::int64_t> axis = attrs.get_int("axis", -1);
      if (!axis.ok()) return axis.error();
      const std::optional<std::int64_t> first = normalize_axis(*axis, shape.size());
      if (!first) return invalid("axis " + std::to_string(*axis) + " out of range for " + to_string(shape));
      for (std::int64_t d = *first; d < rank; ++d) axes.push_back(d);
    } else {
      if (rank < 3) return invalid("InstanceNormalization needs [N, C, spatial...], not " + to_string(shape));
      for (std::int64_t d = 2; d < rank; ++d) axes.push_back(d);
    }
    for (std::int64_t& d : axes) {
      const std::optional<std::int64_t> axis = normalize_axis(d, shape.size());
      if (!axis) return invalid("axis " + std::to_string(d) + " out of range for " + to_string(shape));
      d = *axis;
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return invalid("an axis is repeated");
    Attributes over;
    over.set("axes", axes);
    over.set("keepdims", 1);
    Steps st{*this, node.output(0)};
    if (op == "LpNormalization") {
      Result<std::int64_t> p = attrs.get_int("p", 2);
      if (!p.ok()) return p.error();
      if (*p != 1 && *p != 2) return invalid("p must be 1 or 2, not " + std::to_string(*p));
      const std::string norm = *p == 1 ? st.op(Op::reduce_sum, {st.op(Op::abs, {x})}, over)
                                       : st.op(Op::sqrt, {st.op(Op::reduce_sum, {st.op(Op::mul, {x, x})}, over)});
      st.op(Op::div, {x, norm}, {}, true);
      return st.status;
    }
    Result<float> epsilon = attrs.get_float("epsilon", 1e-5f);
    if (!epsilon.ok()) return epsilon.error();
    if (op == "RMSNormalization") {  // stash_type: the IR computes in float32, as stash_type 1 asks
      const Shape scale = shape_of(*find(input(1)));
      if (broadcast_shapes(scale, shape) != std::optional<Shape>(shape)) {
        return invalid("scale " + to_string(scale) + " does not broadcast to X " + to_string(shape));
      }
      const std::string mean_square = st.op(Op::reduce_mean, {st.op(Op::mul, {x, x})}, over);
      const std::string rms = st.op(Op::sqrt, {st.op(Op::add, {mean_square, st.scalar(*epsilon)})});
      st.op(Op::mul, {st.op(Op::div, {x, rms}), input(1)}, {}, true);
      return st.status;
    }
    const std::string centred = st.op(Op::sub, {x, st.op(Op::reduce_mean, {x}, over)});
    const std::string variance = st.op(Op::reduce_mean, {st.op(Op::mul, {centred, centred})}, over);
    if (op == "MeanVarianceNormalization") {
      st.op(Op::div, {centred, st.op(Op::add, {st.op(Op::sqrt, {variance}), st.scalar(1e-9)})}, {}, true);
      return st.status;
    }
    Shape per_channel(shape.size() - 1, 1);
    per_channel[0] = shape[1];
    for (std::size_t k : {std::size_t{1}, std::size_t{2}}) {
      if (shape_of(*find(input(k))) != Shape{shape[1]}) return invalid("input " + std::to_string(k) + " must be [C] = [" + std::to_string(shape[1]) + "]");
    }
    const std::string deviation = st.op(Op::sqrt, {st.op(Op::add, {variance, st.scalar(*epsilon)})});
    const std::string normalised = st.op(Op::div, {centred, deviation});
    const std::string scaled = st.op(Op::mul, {normalised, st.reshape(input(1), per_channel)});
    st.op(Op::add, {scaled, st.reshape(input(2), per_channel)}, {}, true);
    return st.status;
  }

  /// Attention-23 to 25: Q, K and V as [B, heads, S, D] (from 3-D [B, S, heads * D] with
  /// q_num_heads and kv_num_heads); with a cache, past_key and past_value [B, kv heads, P, D]
  /// concatenated before K and V along the sequence (present_key and present_value, outputs 1
  /// and 2); each key and value head repeated for its group of query heads, scores Q K^T * scale
  /// (default 1/sqrt(D)), softcap * tanh(scores / softcap) when softcap is set, plus the float
  /// mask or, for a load-time boolean one, 0 where it is true and -inf where false (a mask shorter
  /// than the P + S keys padded with -inf, as ONNX pads it), plus -inf where is_causal blocks key j
  /// for query i: j > i + P; softmax over the keys, times V. A query row a load-time mask leaves
  /// no key to attend gives zeros (the errata of 23). The float masks of run-time values are added
  /// as they are.
  Status attention(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(3); !s.ok()) return s;
    if (Status s = only_outputs(node, 3); !s.ok()) return s;  // qk_matmul_output is not produced
    const bool cached = !input(4).empty();
    if (cached == input(5).empty()) return invalid("past_key and past_value must be given together");
    if (!input(6).empty()) return unsupported("nonpad_kv_seqlen");
    Result<std::int64_t> causal = attrs.get_int("is_causal", 0);
    Result<std::int64_t> q_heads_attr = attrs.get_int("q_num_heads", 0);
    Result<std::int64_t> kv_heads_attr = attrs.get_int("kv_num_heads", 0);
    Result<float> softcap = attrs.get_float("softcap", 0.0f);
    Result<std::int64_t> left = attrs.get_int("left_window_size", -1);
    Result<std::int64_t> right = attrs.get_int("right_window_size", -1);
    for (const auto* r : {&causal, &q_heads_attr, &kv_heads_attr, &left, &right}) {
      if (!r->ok()) return r->error();
    }
    if (!softcap.ok()) return softcap.error();
    if (*left != -1 || *right != -1) return unsupported("a sliding window (left_window_size, right_window_size)");
    const Shape q_shape = shape_of(*find(input(0))), k_shape = shape_of(*find(input(1))), v_shape = shape_of(*find(input(2)));
    const std::size_t rank = q_shape.size();
    if ((rank != 3 && rank != 4) || k_shape.size() != rank || v_shape.size() != rank) {
      return invalid("Q, K and V must all be 3-D or all 4-D, not " + to_string(q_shape) + ", " + to_string(k_shape) + ", " + to_string(v_shape));
    }
    const bool packed = rank == 3;
    if (packed && (*q_heads_attr < 1 || *kv_heads_attr < 1 || q_shape[2] % *q_heads_attr != 0 || k_shape[2] % *kv_heads_attr != 0 ||
                   v_shape[2] % *kv_heads_attr != 0)) {
      return invalid("3-D Q, K and V need q_num_heads and kv_num_heads dividing their last dimensions");
    }
    const std::int64_t batch = q_shape[0];
    const std::int64_t q_heads = packed ? *q_heads_attr : q_shape[1], kv_heads = packed ? *kv_heads_attr : k_shape[1];
    const std::int64_t q_len = q_shape[packed ? 1 : 2], kv_len = k_shape[packed ? 1 : 2];
    const std::int64_t head = packed ? q_shape[2] / q_heads : q_shape[3];
    const std::int64_t v_head = packed ? v_shape[2] / kv_heads : v_shape[3];
    const Shape k4 = {batch, kv_heads, kv_len, head}, v4 = {batch, kv_heads, kv_len, v_head};
    if (kv_heads < 1 || k_shape[0] != batch || v_shape[0] != batch || (packed ? k_shape[2] / kv_heads : k_shape[3]) != head ||
        (!packed && (v_shape[1] != kv_heads || v_shape[2] != kv_len)) || (packed && v_shape[1] != kv_len) ||
        q_heads % kv_heads != 0) {
      return invalid("Q " + to_string(q_shape) + ", K " + to_string(k_shape) + " and V " + to_string(v_shape) +
                     " do not fit together (batch, head size, key length, heads a multiple of the key heads)");
    }
    Result<float> scale = attrs.get_float("scale", 1.0f / std::sqrt(static_cast<float>(head)));
    if (!scale.ok()) return scale.error();
    std::int64_t past_len = 0;
    if (cached) {
      const Shape pk = shape_of(*find(input(4))), pv = shape_of(*find(input(5)));
      if (pk.size() != 4 || pv.size() != 4 || pk[0] != batch || pk[1] != kv_heads || pk[3] != head || pv[0] != batch ||
          pv[1] != kv_heads || pv[2] != pk[2] || pv[3] != v_head) {
        return invalid("past_key " + to_string(pk) + " and past_value " + to_string(pv) + " do not fit K " + to_string(k4) +
                       " and V " + to_string(v4) + " (batch, key heads, one past length, head sizes)");
      }
      past_len = pk[2];
    }
    const std::int64_t total = past_len + kv_len;
    Steps st{*this, node.output(0)};
    auto heads_first = [&](const std::string& x, std::int64_t heads, std::int64_t len, std::int64_t size) {
      return packed ? st.transpose(st.reshape(x, {batch, len, heads, size}), {0, 2, 1, 3}) : x;
    };
    auto with_past = [&](const std::string& x, const std::string& past) {
      if (!cached) return x;
      Attributes a;
      a.set("axis", std::int64_t{2});
      return st.op(Op::concat, {past, x}, std::move(a));
    };
    auto grouped = [&](const std::string& x, std::int64_t size) {  // each key head once per query head of its group
      const std::int64_t group = q_heads / kv_heads;
      if (group == 1) return x;
      const std::string one = st.reshape(x, {batch, kv_heads, 1, total, size});
      Attributes a;
      a.set("axis", std::int64_t{2});
      const std::string copies = st.op(Op::concat, std::vector<std::string>(static_cast<std::size_t>(group), one), std::move(a));
      return st.reshape(copies, {batch, q_heads, total, size});
    };
    const std::string q = heads_first(input(0), q_heads, q_len, head);
    const std::string present_k = with_past(heads_first(input(1), kv_heads, kv_len, head), input(4));
    const std::string present_v = with_past(heads_first(input(2), kv_heads, kv_len, v_head), input(5));
    const std::string k = grouped(present_k, head);
    const std::string v = grouped(present_v, v_head);
    std::string scores = st.op(Op::mul, {st.op(Op::matmul, {q, st.transpose(k, {0, 1, 3, 2})}), st.scalar(*scale)});
    if (*softcap > 0.0f) {
      scores = st.op(Op::mul, {st.op(Op::tanh, {st.op(Op::div, {scores, st.scalar(*softcap)})}), st.scalar(*softcap)});
    }
    // The load-time masks (boolean attn_mask, is_causal) as one additive constant, with the rows
    // they leave empty set to 0 there and zeroed in the output instead.
    const float blocked = -std::numeric_limits<float>::infinity();
    std::optional<OnnxTensor> additive, keep;
    const Value* mask = input(3).empty() ? nullptr : find(input(3));
    const bool bool_mask = mask != nullptr && mask->constant && mask->constant->type == ElemType::boolean;
    if (mask != nullptr && mask->constant && !bool_mask && mask->constant->type != ElemType::float32) {
      return unsupported("an attn_mask of " + elem_type_name(mask->constant->type) + " (boolean and float masks are)");
    }
    const Shape mask_shape = mask != nullptr ? shape_of(*mask) : Shape{};
    if (mask != nullptr && (mask_shape.empty() || mask_shape.back() > total)) {
      return invalid("attn_mask " + to_string(mask_shape) + " does not end in at most " + std::to_string(total) + " keys");
    }
    const std::int64_t mask_keys = mask != nullptr ? mask_shape.back() : total;  // the keys after them are masked
    std::string float_mask = mask != nullptr && !bool_mask ? input(3) : "";
    if (!float_mask.empty() && mask_keys < total) {
      Ints pads(2 * mask_shape.size(), 0);
      pads.back() = total - mask_keys;
      Attributes a;
      a.set("pads", std::move(pads));
      a.set("value", static_cast<double>(blocked));
      float_mask = st.op(Op::pad, {float_mask}, std::move(a));
    }
    if (bool_mask || *causal != 0) {
      Shape shape = {1, 1, q_len, total};
      Shape mask_bounds = {1, 1, q_len, mask_keys};  // the scores the mask's elements cover
      if (bool_mask) {
        const std::optional<Shape> both = broadcast_shapes(mask_shape, mask_bounds);
        if (!both || both->size() != 4) return invalid("attn_mask " + to_string(mask_shape) + " does not broadcast to the scores");
        mask_bounds = *both;
        shape = {mask_bounds[0], mask_bounds[1], q_len, total};
      }
      OnnxTensor m;
      m.shape = shape;
      m.reals.assign(static_cast<std::size_t>(numel(shape)), 0.0f);
      keep = OnnxTensor{};
      keep->shape = {shape[0], shape[1], shape[2], 1};
      keep->reals.assign(static_cast<std::size_t>(shape[0] * shape[1] * shape[2]), 1.0f);
      bool empty_rows = false;
      const std::vector<std::int64_t> strides = bool_mask ? broadcast_strides(mask_shape, mask_bounds) : std::vector<std::int64_t>{};
      for (std::int64_t row = 0; row < shape[0] * shape[1] * shape[2]; ++row) {
        const std::int64_t i = row % shape[2];
        bool any = false;
        for (std::int64_t j = 0; j < total; ++j) {
          bool allowed = *causal == 0 || j <= i + past_len;
          if (bool_mask) {
            allowed = allowed && j < mask_keys &&
                      mask->constant->ints[static_cast<std::size_t>(broadcast_offset(row * mask_keys + j, mask_bounds, strides))] != 0;
          }
          m.reals[static_cast<std::size_t>(row * total + j)] = allowed ? 0.0f : blocked;
          any = any || allowed;
        }
        if (!any) {
          empty_rows = true;
          keep->reals[static_cast<std::size_t>(row)] = 0.0f;
          std::fill_n(m.reals.begin() + row * total, total, 0.0f);
        }
      }
      if (!empty_rows) keep.reset();
      additive = std::move(m);
    }
    if (additive) scores = st.op(Op::add, {scores, constant(node.output(0), std::move(*additive))});
    if (!float_mask.empty()) scores = st.op(Op::add, {scores, float_mask});
    Attributes over_keys;
    over_keys.set("axis", std::int64_t{3});
    std::string y = st.op(Op::matmul, {st.op(Op::softmax, {scores}, std::move(over_keys)), v}, {}, !packed && !keep);
    if (keep) y = st.op(Op::mul, {y, constant(node.output(0), std::move(*keep))}, {}, !packed);
    if (packed) st.reshape(st.transpose(y, {0, 2, 1, 3}), {batch, q_len, q_heads * v_head}, true);
    if (!st.status.ok()) return st.status;
    for (const auto& [k_out, present] : {std::pair{1, present_k}, std::pair{2, present_v}}) {
      if (node.output_size() > k_out && !node.output(k_out).empty()) values_[node.output(k_out)] = *find(present);
    }
    return Status::success();
  }

  /// RotaryEmbedding-23 as ONNX defines it: X as [B, S, heads, D] (from [B, heads, S, D] by a
  /// transpose, or from [B, S, heads * D] by a reshape), its first `rotary_embedding_dim` channels
  /// split in halves (or, interleaved, into even and odd channels) x1 and x2 and rotated to
  /// cos * x1 - sin * x2 and sin * x1 + cos * x2, the rest kept, and X's layout restored. The
  /// caches are [B, S, dim / 2], or [positions, dim / 2] with position_ids [B, S] given at load
  /// time, whose rows are selected as Gather selects them.
  Status rotary_embedding(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(3); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    Result<std::int64_t> interleaved = attrs.get_int("interleaved", 0);
    Result<std::int64_t> heads_attr = attrs.get_int("num_heads", 0);
    Result<std::int64_t> dim_attr = attrs.get_int("rotary_embedding_dim", 0);
    if (!interleaved.ok()) return interleaved.error();
    if (!heads_attr.ok()) return heads_attr.error();
    if (!dim_attr.ok()) return dim_attr.error();
    const Shape shape = shape_of(*find(input(0)));
    if (shape.size() != 3 && shape.size() != 4) return invalid("X must be 3-D or 4-D, not " + to_string(shape));
    const bool packed = shape.size() == 3;
    const std::int64_t batch = shape[0], seq = packed ? shape[1] : shape[2];
    if (packed && (*heads_attr < 1 || shape[2] % *heads_attr != 0)) {
      return invalid("a 3-D X " + to_string(shape) + " needs num_heads dividing its last dimension, not " + std::to_string(*heads_attr));
    }
    const std::int64_t heads = packed ? *heads_attr : shape[1];
    const std::int64_t head_size = packed ? shape[2] / heads : shape[3];
    const std::int64_t dim = *dim_attr == 0 ? head_size : *dim_attr;
    if (dim < 2 || dim % 2 != 0 || dim > head_size) {
      return invalid("rotary_embedding_dim " + std::to_string(dim) + " must be even and at most the head size " + std::to_string(head_size));
    }
    const std::int64_t half = dim / 2;
    Result<const OnnxTensor*> positions = load_time(3);
    if (!positions.ok()) return positions.error();
    if (*positions != nullptr && (!is_integer_type((*positions)->type) || (*positions)->shape != Shape{batch, seq})) {
      return invalid("position_ids must be integers of shape " + to_string(Shape{batch, seq}));
    }
    Steps st{*this, node.output(0)};
    auto per_token = [&](std::size_t k) -> Result<std::string> {  // a cache as [B, S, 1, dim / 2]
      const Shape cache = shape_of(*find(input(k)));
      std::string rows = input(k);
      if (*positions != nullptr) {
        if (cache.size() != 2 || cache[1] != half) return invalid("input " + std::to_string(k) + " must be [positions, " + std::to_string(half) + "], not " + to_string(cache));
        for (std::int64_t p : (*positions)->ints) {
          if (p < 0 || p >= cache[0]) return invalid("position " + std::to_string(p) + " out of range for " + std::to_string(cache[0]) + " cached positions");
        }
        rows = fresh_name(node.output(0));
        Result<bool> done = select_along_axis(input(k), 0, (*positions)->ints, rows);
        if (!done.ok()) return done.error();
        if (!*done) return unsupported("position_ids that select more than 64 runs of cached positions");
      } else if (cache != Shape{batch, seq, half}) {
        return invalid("input " + std::to_string(k) + " must be " + to_string(Shape{batch, seq, half}) + " without position_ids, not " + to_string(cache));
      }
      return st.reshape(rows, {batch, seq, 1, half});
    };
    Result<std::string> cos = per_token(1);
    if (!cos.ok()) return cos.error();
    Result<std::string> sin = per_token(2);
    if (!sin.ok()) return sin.error();
    const Shape tokens = {batch, seq, heads, head_size};
    const std::string x = packed ? st.reshape(input(0), tokens) : st.transpose(input(0), {0, 2, 1, 3});
    const std::string rotated_part = dim == head_size ? x : st.slice(x, 3, 0, dim);
    std::string x1, x2;
    if (*interleaved != 0) {  // channel pairs (2i, 2i + 1)
      const std::string pairs = st.reshape(rotated_part, {batch, seq, heads, half, 2});
      x1 = st.reshape(st.slice(pairs, 4, 0, 1), {batch, seq, heads, half});
      x2 = st.reshape(st.slice(pairs, 4, 1, 2), {batch, seq, heads, half});
    } else {
      x1 = st.slice(rotated_part, 3, 0, half);
      x2 = st.slice(rotated_part, 3, half, dim);
    }
    const std::string real = st.op(Op::sub, {st.op(Op::mul, {*cos, x1}), st.op(Op::mul, {*sin, x2})});
    const std::string imag = st.op(Op::add, {st.op(Op::mul, {*sin, x1}), st.op(Op::mul, {*cos, x2})});
    auto along = [](std::int64_t axis) {
      Attributes a;
      a.set("axis", axis);
      return a;
    };
    std::string rotated;
    if (*interleaved != 0) {
      const Shape pair = {batch, seq, heads, half, 1};
      const std::string joined = st.op(Op::concat, {st.reshape(real, pair), st.reshape(imag, pair)}, along(4));
      rotated = st.reshape(joined, {batch, seq, heads, dim});
    } else {
      rotated = st.op(Op::concat, {real, imag}, along(3));
    }
    const std::string whole = dim == head_size ? rotated : st.op(Op::concat, {rotated, st.slice(x, 3, dim, head_size)}, along(3));
    if (packed) {
      st.reshape(whole, shape, true);
    } else {
      st.transpose(whole, {0, 2, 1, 3}, true);
    }
    return st.status;
  }

  /// DepthToSpace (DCR or CRD order) and SpaceToDepth on [N, C, H, W]: a reshape to six
  /// dimensions, a transpose and a reshape back to four.
  Status depth_space(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(1); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    const Shape shape = shape_of(*find(input(0)));
    if (shape.size() != 4) return invalid(node.op_type() + " needs [N, C, H, W], not " + to_string(shape));
    Result<std::int64_t> block = attrs.get_int("blocksize", 0);
    if (!block.ok()) return block.error();
    const std::int64_t b = *block;
    if (b < 1 || b > detail::kMaxDim) return invalid("blocksize " + std::to_string(b) + " is out of range");
    const std::int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3];
    Shape split, back;
    Ints perm;
    if (node.op_type() == "DepthToSpace") {
      if (c % (b * b) != 0) return invalid("channels " + std::to_string(c) + " are not a multiple of blocksize^2 = " + std::to_string(b * b));
      Result<std::string> mode = attrs.get_string("mode", "DCR");
      if (!mode.ok()) return mode.error();
      if (*mode == "DCR") {
        split = {n, b, b, c / (b * b), h, w};
        perm = {0, 3, 4, 1, 5, 2};
      } else if (*mode == "CRD") {
        split = {n, c / (b * b), b, b, h, w};
        perm = {0, 1, 4, 2, 5, 3};
      } else {
        return invalid("mode must be DCR or CRD, not '" + *mode + "'");
      }
      back = {n, c / (b * b), h * b, w * b};
    } else {
      if (h % b != 0 || w % b != 0) return invalid("H and W must be multiples of blocksize " + std::to_string(b));
      split = {n, c, h / b, b, w / b, b};
      perm = {0, 3, 5, 1, 2, 4};
      back = {n, c * b * b, h / b, w / b};
    }
    Steps st{*this, node.output(0)};
    st.reshape(st.transpose(st.reshape(input(0), split), perm), back, true);
    return st.status;
  }

  /// ConvTranspose of X [N, C, i...] with weights W [C, M / group, k...]. When each output element comes
  /// from one input position (kernel = strides, no pads, dilations or output padding, one group),
  /// a 1x1 Conv to M * prod(k) channels whose result is rearranged into the strided output (as
  /// DepthToSpace); otherwise the Conv of the input with strides - 1 zeros between its elements,
  /// padded by (k - 1) * dilation - pads (plus output_padding at the end), with the kernel's in
  /// and out channels swapped per group and its taps reversed. Pads come from `pads`, or from
  /// `output_shape` or auto_pad as ONNX defines them (total padding split with floor division).
  /// The weights' rearrangements are IR operators too, folded at load time when W is a constant.
  Status conv_transpose(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(2); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    const std::string& x = input(0);
    const std::string& w = input(1);
    const Shape x_shape = shape_of(*find(x));
    const Shape w_shape = shape_of(*find(w));
    const std::size_t rank = x_shape.size();
    if (rank < 3 || w_shape.size() != rank) {
      return invalid("ConvTranspose needs X [N, C, spatial...] and W [C, M / group, k...], not " + to_string(x_shape) + " and " + to_string(w_shape));
    }
    const std::size_t r = rank - 2;
    Result<std::int64_t> group_attr = attrs.get_int("group", 1);
    if (!group_attr.ok()) return group_attr.error();
    const std::int64_t group = *group_attr, c = x_shape[1];
    if (group < 1 || c != w_shape[0] || c % group != 0) {
      return invalid("X's " + std::to_string(c) + " channels do not match W " + to_string(w_shape) + " in " + std::to_string(group) + " groups");
    }
    const std::int64_t m_per_group = w_shape[1], m = m_per_group * group, c_per_group = c / group;
    const Shape kernel(w_shape.begin() + 2, w_shape.end());
    auto ints_or = [&](const char* name, std::int64_t fallback) -> Result<Ints> {
      const std::size_t want = std::string(name) == "pads" ? 2 * r : r;
      Result<Ints> v = attrs.get_ints(name, Ints(want, fallback));
      if (!v.ok()) return v.error();
      if (v->size() != want) return invalid(std::string(name) + " " + to_string(*v) + " must have " + std::to_string(want) + " entries");
      for (std::int64_t e : *v) {
        if (e < -detail::kMaxDim || e > detail::kMaxDim) return invalid(std::string(name) + " " + to_string(*v) + " are out of range");
      }
      return v;
    };
    Result<Ints> strides = ints_or("strides", 1), dilations = ints_or("dilations", 1), output_padding = ints_or("output_padding", 0);
    Result<Ints> pads = ints_or("pads", 0), kernel_attr = attrs.get_ints("kernel_shape", kernel);
    for (const Result<Ints>* v : {&strides, &dilations, &output_padding, &pads, &kernel_attr}) {
      if (!v->ok()) return v->error();
    }
    if (*kernel_attr != kernel) return invalid("kernel_shape " + to_string(*kernel_attr) + " differs from W's " + to_string(kernel));
    Result<std::string> auto_pad = attrs.get_string("auto_pad", "NOTSET");
    if (!auto_pad.ok()) return auto_pad.error();
    const bool has_output_shape = attrs.has("output_shape");
    Result<Ints> output_shape = attrs.get_ints("output_shape", {});
    if (!output_shape.ok()) return output_shape.error();
    if (has_output_shape && output_shape->size() != r && output_shape->size() != rank) {
      return invalid("output_shape " + to_string(*output_shape) + " must have " + std::to_string(r) + " entries");
    }
    const auto floor_half = [](std::int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); };
    Ints effective(r);
    for (std::size_t d = 0; d < r; ++d) {
      const std::int64_t s = (*strides)[d], dil = (*dilations)[d], op = (*output_padding)[d];
      if (s < 1 || dil < 1 || kernel[d] < 1) return invalid("strides, dilations and the kernel must be positive");
      if (op < 0 || op >= std::max(s, dil)) return invalid("output_padding " + to_string(*output_padding) + " must be below the strides or dilations");
      effective[d] = (kernel[d] - 1) * dil + 1;
      const bool same = *auto_pad == "SAME_UPPER" || *auto_pad == "SAME_LOWER";
      if (!has_output_shape && !same) {
        if (*auto_pad == "VALID") (*pads)[d] = (*pads)[d + r] = 0;
        else if (*auto_pad != "NOTSET") return invalid("unknown auto_pad '" + *auto_pad + "'");
        continue;
      }
      const std::int64_t target = has_output_shape ? (*output_shape)[output_shape->size() - r + d] : x_shape[d + 2] * s;
      const std::int64_t total = s * (x_shape[d + 2] - 1) + op + effective[d] - target;
      const std::int64_t half = floor_half(total);
      (*pads)[d] = *auto_pad == "SAME_UPPER" ? half : total - half;
      (*pads)[d + r] = total - (*pads)[d];
    }
    Shape out_shape = {x_shape[0], m};
    for (std::size_t d = 0; d < r; ++d) {
      const std::int64_t o = (*strides)[d] * (x_shape[d + 2] - 1) + (*output_padding)[d] + effective[d] - (*pads)[d] - (*pads)[d + r];
      if (o < 1) return invalid("the output would be empty along spatial axis " + std::to_string(d));
      out_shape.push_back(o);
    }
    if (!detail::checked_numel(out_shape)) return invalid("the output " + to_string(out_shape) + " is too large");
    Steps st{*this, node.output(0)};
    const std::int64_t taps = product(kernel, 0, r);
    const bool one_source = group == 1 && std::all_of(std::begin(*pads), std::end(*pads), [](std::int64_t p) { return p == 0; }) &&
                            [&] {
                              for (std::size_t d = 0; d < r; ++d) {
                                if ((*strides)[d] != kernel[d] || (*dilations)[d] != 1 || (*output_padding)[d] != 0) return false;
                              }
                              return true;
                            }();
    if (one_source) {
      // W [C, M, k...] as 1x1 weights [M * taps, C, 1...]: row (o, t) is W[:, o, t].
      Shape ones(r, 1);
      Shape w1_shape = {m * taps, c};
      w1_shape.insert(w1_shape.end(), ones.begin(), ones.end());
      const std::string w1 = st.reshape(st.transpose(st.reshape(w, {c, m * taps}), {1, 0}), w1_shape);
      const std::string spread = st.op(Op::conv, {x, w1});
      Shape split = {x_shape[0], m};
      split.insert(split.end(), kernel.begin(), kernel.end());
      split.insert(split.end(), x_shape.begin() + 2, x_shape.end());
      Ints perm = {0, 1};
      for (std::size_t d = 0; d < r; ++d) {
        perm.push_back(static_cast<std::int64_t>(2 + r + d));
        perm.push_back(static_cast<std::int64_t>(2 + d));
      }
      const bool biased = !input(2).empty();
      const std::string placed = st.reshape(st.transpose(st.reshape(spread, split), perm), out_shape, !biased);
      if (biased) {
        Shape per_channel(r + 1, 1);
        per_channel[0] = m;
        st.op(Op::add, {placed, st.reshape(input(2), per_channel)}, {}, true);
      }
      return st.status;
    }
    // The kernel per group with in and out channels swapped, [M, C / group, k...], its taps reversed.
    Shape grouped = {group, c_per_group, m_per_group}, swapped = {m, c_per_group};
    grouped.insert(grouped.end(), kernel.begin(), kernel.end());
    swapped.insert(swapped.end(), kernel.begin(), kernel.end());
    Ints perm = {0, 2, 1};
    Ints flip_axes, flip_starts, flip_ends, flip_steps;
    for (std::size_t d = 0; d < r; ++d) {
      perm.push_back(static_cast<std::int64_t>(3 + d));
      flip_axes.push_back(static_cast<std::int64_t>(2 + d));
      flip_starts.push_back(kernel[d] - 1);
      flip_ends.push_back(-kernel[d] - 1);
      flip_steps.push_back(-1);
    }
    Attributes flip;
    flip.set("starts", flip_starts);
    flip.set("ends", flip_ends);
    flip.set("axes", flip_axes);
    flip.set("steps", flip_steps);
    const std::string flipped =
        st.op(Op::slice, {st.reshape(st.transpose(st.reshape(w, grouped), perm), swapped)}, std::move(flip));
    std::string spaced = x;
    if (std::any_of(strides->begin(), strides->end(), [](std::int64_t s) { return s > 1; })) {
      // [N, C, i1, 1, i2, 1, ...] padded with s - 1 zeros on each new axis, then merged: [N, C, i1 * s1, ...].
      Shape interleaved = {x_shape[0], c}, merged = {x_shape[0], c};
      for (std::size_t d = 0; d < r; ++d) {
        interleaved.push_back(x_shape[d + 2]);
        interleaved.push_back(1);
        merged.push_back(x_shape[d + 2] * (*strides)[d]);
      }
      Ints widen(2 * interleaved.size(), 0);
      for (std::size_t d = 0; d < r; ++d) widen[interleaved.size() + 3 + 2 * d] = (*strides)[d] - 1;
      Attributes pad;
      pad.set("pads", widen);
      spaced = st.reshape(st.op(Op::pad, {st.reshape(x, interleaved)}, std::move(pad)), merged);
    }
    Ints border(2 * r);
    bool inside = true;
    for (std::size_t d = 0; d < r; ++d) {
      border[d] = effective[d] - 1 - (*pads)[d];
      border[d + r] = effective[d] - 1 - (*pads)[d + r] + (*output_padding)[d] - ((*strides)[d] - 1);
      inside = inside && border[d] >= 0 && border[d + r] >= 0;
    }
    Attributes conv;
    conv.set("group", group);
    conv.set("dilations", *dilations);
    if (inside) {
      conv.set("pads", border);
    } else {
      Ints all(2 * rank, 0);
      for (std::size_t d = 0; d < r; ++d) {
        all[2 + d] = border[d];
        all[rank + 2 + d] = border[d + r];
      }
      Attributes pad;
      pad.set("pads", all);
      spaced = st.op(Op::pad, {spaced}, std::move(pad));
    }
    std::vector<std::string> operands = {spaced, flipped};
    if (!input(2).empty()) operands.push_back(input(2));
    st.op(Op::conv, operands, std::move(conv), true);
    return st.status;
  }

  /// RNN, GRU and LSTM unrolled over the sequence, as ONNX defines them: per direction, the
  /// input's projections for every step in one MatMul (X as [seq * batch, I] by W^T, plus the
  /// biases), then per step the hidden state's projection (H by R^T) and the gates. Activations
  /// Sigmoid, Tanh and Relu; clip; LSTM's peepholes; GRU's linear_before_reset; layout 1 (batch
  /// first). sequence_lens, when given, must give every batch entry the whole sequence; LSTM's
  /// input_forget is not supported.
  Status recurrent(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    const std::string& op = node.op_type();
    const bool lstm = op == "LSTM", gru = op == "GRU";
    const std::int64_t gates = lstm ? 4 : gru ? 3 : 1;
    if (Status s = need_inputs(3); !s.ok()) return s;
    if (Status s = only_outputs(node, lstm ? 3 : 2); !s.ok()) return s;
    Result<std::int64_t> hidden_attr = attrs.get_int("hidden_size", 0);
    Result<std::int64_t> layout = attrs.get_int("layout", 0);
    Result<std::string> direction = attrs.get_string("direction", "forward");
    Result<std::int64_t> input_forget = attrs.get_int("input_forget", 0);
    Result<std::int64_t> linear_before_reset = attrs.get_int("linear_before_reset", 0);
    Result<float> clip = attrs.get_float("clip", 0.0f);
    const std::vector<std::string> defaults = lstm ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                              : gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                    : std::vector<std::string>{"Tanh"};
    Result<std::vector<std::string>> activations = attrs.get_strings("activations", {});
    if (!hidden_attr.ok()) return hidden_attr.error();
    if (!layout.ok()) return layout.error();
    if (!direction.ok()) return direction.error();
    if (!input_forget.ok()) return input_forget.error();
    if (!linear_before_reset.ok()) return linear_before_reset.error();
    if (!clip.ok()) return clip.error();
    if (!activations.ok()) return activations.error();
    if (*input_forget != 0) return unsupported("input_forget");
    if (*layout != 0 && *layout != 1) return invalid("layout must be 0 or 1, not " + std::to_string(*layout));
    if (*direction != "forward" && *direction != "reverse" && *direction != "bidirectional") {
      return invalid("direction must be forward, reverse or bidirectional, not '" + *direction + "'");
    }
    const std::int64_t dirs = *direction == "bidirectional" ? 2 : 1;
    const auto per_direction = defaults.size();
    if (activations->empty()) {
      for (std::int64_t d = 0; d < dirs; ++d) activations->insert(activations->end(), defaults.begin(), defaults.end());
    } else if (activations->size() == per_direction && dirs == 2) {
      activations->insert(activations->end(), activations->begin(), activations->end());
    } else if (activations->size() != per_direction * static_cast<std::size_t>(dirs)) {
      return invalid(std::to_string(activations->size()) + " activations for " + std::to_string(per_direction) + " per direction");
    }
    for (const std::string& a : *activations) {
      if (a != "Sigmoid" && a != "Tanh" && a != "Relu") return unsupported("activation " + a + " (Sigmoid, Tanh and Relu are)");
    }
    const Shape x_shape = shape_of(*find(input(0)));
    if (x_shape.size() != 3) return invalid("X must be 3-D, not " + to_string(x_shape));
    const std::int64_t seq = x_shape[*layout == 0 ? 0 : 1], batch = x_shape[*layout == 0 ? 1 : 0], width = x_shape[2];
    const Shape w_shape = shape_of(*find(input(1))), r_shape = shape_of(*find(input(2)));
    const std::int64_t hidden = *hidden_attr > 0 ? *hidden_attr : (w_shape.size() == 3 ? w_shape[1] / gates : 0);
    const std::int64_t gh = gates * hidden;
    if (hidden < 1 || w_shape != Shape{dirs, gh, width} || r_shape != Shape{dirs, gh, hidden}) {
      return invalid("W " + to_string(w_shape) + " and R " + to_string(r_shape) + " do not fit X " + to_string(x_shape) + ", " +
                     std::to_string(dirs) + " direction(s) and hidden size " + std::to_string(hidden));
    }
    if (seq < 1) return invalid("an empty sequence");
    if (!input(4).empty()) {
      Result<Ints> lengths = int_list_input(4);
      if (!lengths.ok()) return lengths.error();
      for (std::int64_t n : *lengths) {
        if (n != seq) return unsupported("sequence_lens " + to_string(*lengths) + " shorter than the sequence (" + std::to_string(seq) + ")");
      }
    }
    const Shape state_shape = *layout == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden};
    for (std::size_t k : {std::size_t{5}, std::size_t{6}}) {
      if (!input(k).empty() && shape_of(*find(input(k))) != state_shape) {
        return invalid("input " + std::to_string(k) + " must be " + to_string(state_shape) + ", not " + to_string(shape_of(*find(input(k)))));
      }
    }
    const bool has_bias = !input(3).empty(), has_peepholes = lstm && !input(7).empty();
    if (has_bias && shape_of(*find(input(3))) != Shape{dirs, 2 * gh}) return invalid("B must be " + to_string(Shape{dirs, 2 * gh}));
    if (has_peepholes && shape_of(*find(input(7))) != Shape{dirs, 3 * hidden}) return invalid("P must be " + to_string(Shape{dirs, 3 * hidden}));

    std::string base;
    for (const std::string& o : node.output()) {
      if (base.empty() && !o.empty()) base = o;
    }
    Steps st{*this, base};
    auto joined = [&](const std::vector<std::string>& parts, std::int64_t axis) {
      if (parts.size() == 1) return parts[0];
      Attributes a;
      a.set("axis", axis);
      return st.op(Op::concat, parts, std::move(a));
    };
    auto activate = [&](const std::string& name, const std::string& v) {
      const std::string clipped = [&] {
        if (!attrs.has("clip")) return v;
        Attributes a;
        a.set("min", -static_cast<double>(*clip));
        a.set("max", static_cast<double>(*clip));
        return st.op(Op::clip, {v}, std::move(a));
      }();
      return st.op(name == "Sigmoid" ? Op::sigmoid : name == "Tanh" ? Op::tanh : Op::relu, {clipped});
    };
    auto zeros = [&](Shape shape) {
      OnnxTensor t;
      t.shape = std::move(shape);
      t.reals.assign(static_cast<std::size_t>(numel(t.shape)), 0.0f);
      return constant(base, std::move(t));
    };
    const std::string x = *layout == 0 ? input(0) : st.transpose(input(0), {1, 0, 2});
    const std::string x_rows = st.reshape(x, {seq * batch, width});
    auto initial = [&](std::size_t k, std::int64_t d) {
      if (input(k).empty()) return zeros({batch, hidden});
      const std::string given = *layout == 0 ? input(k) : st.transpose(input(k), {1, 0, 2});
      return st.reshape(st.slice(given, 0, d, d + 1), {batch, hidden});
    };
    const bool want_y = node.output_size() > 0 && !node.output(0).empty();
    std::vector<std::string> y_dirs, h_last, c_last;
    for (std::int64_t d = 0; d < dirs; ++d) {
      const bool reverse = *direction == "reverse" || d == 1;
      const std::string* act = &(*activations)[static_cast<std::size_t>(d) * per_direction];
      const std::string w_t = st.transpose(st.reshape(st.slice(input(1), 0, d, d + 1), {gh, width}), {1, 0});
      const std::string r_t = st.transpose(st.reshape(st.slice(input(2), 0, d, d + 1), {gh, hidden}), {1, 0});
      std::string projected = st.op(Op::matmul, {x_rows, w_t});
      std::string r_bias;
      if (has_bias) {
        const std::string b = st.reshape(st.slice(input(3), 0, d, d + 1), {2 * gh});
        r_bias = st.slice(b, 0, gh, 2 * gh);
        projected = st.op(Op::add, {projected, st.slice(b, 0, 0, gh)});
        if (!gru || *linear_before_reset == 0) projected = st.op(Op::add, {projected, r_bias});
      }
      std::string peep_i, peep_o, peep_f;
      if (has_peepholes) {
        const std::string p = st.reshape(st.slice(input(7), 0, d, d + 1), {3 * hidden});
        peep_i = st.slice(p, 0, 0, hidden);
        peep_o = st.slice(p, 0, hidden, 2 * hidden);
        peep_f = st.slice(p, 0, 2 * hidden, 3 * hidden);
      }
      const std::string r_zr = gru && *linear_before_reset == 0 ? st.slice(r_t, 1, 0, 2 * hidden) : r_t;
      const std::string r_h = gru && *linear_before_reset == 0 ? st.slice(r_t, 1, 2 * hidden, 3 * hidden) : std::string();
      std::string h = initial(5, d), c = lstm ? initial(6, d) : std::string();
      std::vector<std::string> ys(static_cast<std::size_t>(seq));
      for (std::int64_t k = 0; k < seq; ++k) {
        const std::int64_t t = reverse ? seq - 1 - k : k;
        const std::string xt = st.slice(projected, 0, t * batch, (t + 1) * batch);
        auto gate = [&](const std::string& v, std::int64_t g) { return st.slice(v, 1, g * hidden, (g + 1) * hidden); };
        if (lstm) {
          const std::string pre = st.op(Op::add, {xt, st.op(Op::matmul, {h, r_t})});
          std::string in, out, forget;
          if (has_peepholes) {
            in = activate(act[0], st.op(Op::add, {gate(pre, 0), st.op(Op::mul, {peep_i, c})}));
            forget = activate(act[0], st.op(Op::add, {gate(pre, 2), st.op(Op::mul, {peep_f, c})}));
          } else {  // one activation over the three gates it applies to, then slices
            const std::string activated = activate(act[0], st.slice(pre, 1, 0, 3 * hidden));
            in = gate(activated, 0);
            out = gate(activated, 1);
            forget = gate(activated, 2);
          }
          const std::string cell_in = activate(act[1], gate(pre, 3));
          c = st.op(Op::add, {st.op(Op::mul, {forget, c}), st.op(Op::mul, {in, cell_in})});
          if (has_peepholes) out = activate(act[0], st.op(Op::add, {gate(pre, 1), st.op(Op::mul, {peep_o, c})}));
          h = st.op(Op::mul, {out, activate(act[2], c)});
        } else if (gru) {
          std::string recurrent_part = st.op(Op::matmul, {h, r_zr});
          if (*linear_before_reset != 0 && has_bias) recurrent_part = st.op(Op::add, {recurrent_part, r_bias});
          const std::string z = activate(act[0], st.op(Op::add, {gate(xt, 0), gate(recurrent_part, 0)}));
          const std::string r = activate(act[0], st.op(Op::add, {gate(xt, 1), gate(recurrent_part, 1)}));
          const std::string reset = *linear_before_reset != 0 ? st.op(Op::mul, {r, gate(recurrent_part, 2)})
                                                              : st.op(Op::matmul, {st.op(Op::mul, {r, h}), r_h});
          const std::string candidate = activate(act[1], st.op(Op::add, {gate(xt, 2), reset}));
          h = st.op(Op::add, {candidate, st.op(Op::mul, {z, st.op(Op::sub, {h, candidate})})});
        } else {
          h = activate(act[0], st.op(Op::add, {xt, st.op(Op::matmul, {h, r_t})}));
        }
        if (want_y) ys[static_cast<std::size_t>(t)] = h;
      }
      if (want_y) y_dirs.push_back(st.reshape(joined(ys, 0), {seq, 1, batch, hidden}));
      h_last.push_back(st.reshape(h, {1, batch, hidden}));
      if (lstm) c_last.push_back(st.reshape(c, {1, batch, hidden}));
    }
    if (!st.status.ok()) return st.status;
    auto bind = [&](int k, std::string v, Ints perm) -> Status {
      if (node.output_size() <= k || node.output(k).empty()) return Status::success();
      if (*layout != 0) v = st.transpose(v, std::move(perm));
      if (!st.status.ok()) return st.status;
      values_[node.output(k)] = *find(v);
      return Status::success();
    };
    if (Status s = bind(0, want_y ? joined(y_dirs, 1) : std::string(), {2, 0, 1, 3}); !s.ok()) return s;
    if (Status s = bind(1, joined(h_last, 0), {1, 0, 2}); !s.ok()) return s;
    if (lstm) return bind(2, joined(c_last, 0), {1, 0, 2});
    return Status::success();
  }

  /// Tile with load-time repeats: along each repeated axis, a concat of that many copies.
  Status tile(const ::onnx::NodeProto& node) {
    if (Status s = need_inputs(2); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    Result<Ints> repeats = int_list_input(1);
    if (!repeats.ok()) return repeats.error();
    const Shape shape = shape_of(*find(input(0)));
    if (repeats->size() != shape.size()) return invalid("repeats " + to_string(*repeats) + " do not match rank " + std::to_string(shape.size()));
    std::int64_t total = 1;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const std::int64_t r = (*repeats)[d];
      if (r < 1 || r > detail::kMaxDim || total > detail::kMaxDim / r) return invalid("repeats " + to_string(*repeats) + ": each must be 1 or more (and the result not too large)");
      total *= r;
    }
    std::size_t last = shape.size();
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if ((*repeats)[d] != 1) last = d;
    }
    if (last == shape.size()) {
      values_[node.output(0)] = *find(input(0));
      return Status::success();
    }
    Steps st{*this, node.output(0)};
    std::string acc = input(0);
    for (std::size_t d = 0; d <= last; ++d) {
      const std::int64_t r = (*repeats)[d];
      if (r == 1) continue;
      Attributes along;
      along.set("axis", static_cast<std::int64_t>(d));
      acc = st.op(Op::concat, std::vector<std::string>(static_cast<std::size_t>(r), acc), std::move(along), d == last);
    }
    return st.status;
  }

  /// Einsum of one or two operands. Each subscript is a label (a letter; "..." stands for the
  /// operand's unnamed dimensions, aligned right across the operands and of equal sizes); the
  /// output's are those after "->", else "..." and the labels used once, in alphabetical order.
  /// Labels one operand has alone and the output lacks are summed first (ReduceSum). Of two
  /// operands, the labels both have are batch dimensions when the output keeps them and are
  /// contracted otherwise: the first operand transposed to [batch, own, contracted] and the second
  /// to [batch, contracted, own], each group of own and contracted dimensions reshaped into one,
  /// a MatMul, and the product reshaped and transposed to the output's order. A label repeated in
  /// one operand (a diagonal) and more than two operands are refused.
  Status einsum(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    const std::size_t operands = inputs_.size();
    if (operands < 1 || operands > 2) return unsupported("Einsum of " + std::to_string(operands) + " operands (one or two are)");
    if (Status s = need_inputs(operands); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    Result<std::string> written = attrs.get_string("equation", "");
    if (!written.ok()) return written.error();
    std::string equation;
    for (char c : *written) {
      if (c != ' ') equation += c;
    }
    // Labels: a letter's code, or kUnnamed + k for the k-th unnamed dimension from the right.
    using Labels = std::vector<int>;
    constexpr int kUnnamed = 1000;
    auto parse = [&](const std::string& term, std::size_t rank, Labels& labels) -> Status {
      const std::size_t dots = term.find("...");
      const std::size_t named = term.size() - (dots == std::string::npos ? 0 : 3);
      if (named > rank || (dots == std::string::npos && named != rank)) {
        return invalid("equation '" + *written + "': '" + term + "' does not fit an operand of rank " + std::to_string(rank));
      }
      for (std::size_t i = 0; i < term.size(); ++i) {
        if (i == dots) {
          for (std::size_t k = rank - named; k-- > 0;) labels.push_back(kUnnamed + static_cast<int>(k));
          i += 2;
        } else if (std::isalpha(static_cast<unsigned char>(term[i])) != 0) {
          labels.push_back(term[i]);
        } else {
          return invalid("equation '" + *written + "': '" + term[i] + "' is not a subscript");
        }
      }
      return Status::success();
    };
    const std::size_t arrow = equation.find("->");
    const std::string lhs = equation.substr(0, arrow);
    std::vector<std::string> terms(1);
    for (char c : lhs) {
      if (c == ',') terms.emplace_back();
      else terms.back() += c;
    }
    if (terms.size() != operands) {
      return invalid("equation '" + *written + "' has " + std::to_string(terms.size()) + " operands, the node " + std::to_string(operands));
    }
    std::vector<Labels> in(operands);
    std::vector<Shape> shapes(operands);
    std::map<int, std::int64_t> size;
    int unnamed = 0;
    for (std::size_t k = 0; k < operands; ++k) {
      shapes[k] = shape_of(*find(input(k)));
      if (Status s = parse(terms[k], shapes[k].size(), in[k]); !s.ok()) return s;
      for (std::size_t d = 0; d < in[k].size(); ++d) {
        const int label = in[k][d];
        if (std::count(in[k].begin(), in[k].end(), label) > 1) {
          return unsupported("equation '" + *written + "': a subscript repeated in one operand (a diagonal)");
        }
        if (label >= kUnnamed) unnamed = std::max(unnamed, label - kUnnamed + 1);
        const auto [it, fresh] = size.emplace(label, shapes[k][d]);
        if (!fresh && it->second != shapes[k][d]) {
          return invalid("equation '" + *written + "': a dimension of " + std::to_string(it->second) + " meets one of " +
                         std::to_string(shapes[k][d]));
        }
      }
    }
    Labels out;
    if (arrow != std::string::npos) {
      const std::string term = equation.substr(arrow + 2);
      const bool dots = term.find("...") != std::string::npos;
      if (Status s = parse(term, dots ? term.size() - 3 + static_cast<std::size_t>(unnamed) : term.size(), out); !s.ok()) return s;
      for (int label : out) {
        if (size.count(label) == 0 || std::count(out.begin(), out.end(), label) > 1) {
          return invalid("equation '" + *written + "': an output subscript no operand has, or repeated");
        }
      }
    } else {
      for (int k = unnamed; k-- > 0;) out.push_back(kUnnamed + k);
      for (const auto& [label, extent] : size) {
        std::size_t uses = 0;
        for (const Labels& l : in) uses += static_cast<std::size_t>(std::count(l.begin(), l.end(), label));
        if (label < kUnnamed && uses == 1) out.push_back(label);
      }
    }
    auto has = [](const Labels& l, int label) { return std::find(l.begin(), l.end(), label) != l.end(); };
    auto dims = [&](const Labels& l) {
      Shape s;
      for (int label : l) s.push_back(size[label]);
      return s;
    };
    Steps st{*this, node.output(0)};
    // `x` with labels `from` transposed to the order of `to` (the same labels).
    auto permuted = [&](const std::string& x, const Labels& from, const Labels& to) {
      Ints perm;
      for (int label : to) perm.push_back(std::find(from.begin(), from.end(), label) - from.begin());
      bool identity = true;
      for (std::size_t d = 0; d < perm.size(); ++d) identity = identity && perm[d] == static_cast<std::int64_t>(d);
      return identity ? x : st.transpose(x, std::move(perm));
    };
    // Operand k with the labels only it has and the output lacks summed away.
    std::vector<std::string> summed(operands);
    for (std::size_t k = 0; k < operands; ++k) {
      Labels kept;
      Ints axes;
      for (std::size_t d = 0; d < in[k].size(); ++d) {
        const int label = in[k][d];
        const bool elsewhere = has(out, label) || (operands == 2 && has(in[1 - k], label));
        if (elsewhere) kept.push_back(label);
        else axes.push_back(static_cast<std::int64_t>(d));
      }
      summed[k] = input(k);
      if (!axes.empty()) {
        Attributes a;
        a.set("axes", std::move(axes));
        a.set("keepdims", 0);
        summed[k] = st.op(Op::reduce_sum, {summed[k]}, std::move(a));
      }
      in[k] = kept;
    }
    std::string result;
    if (operands == 1) {
      result = permuted(summed[0], in[0], out);
    } else {
      Labels batch, contracted, own_a, own_b;
      for (int label : in[0]) {
        if (!has(in[1], label)) own_a.push_back(label);
        else if (has(out, label)) batch.push_back(label);
        else contracted.push_back(label);
      }
      for (int label : in[1]) {
        if (!has(in[0], label)) own_b.push_back(label);
      }
      auto joined = [](Labels a, const Labels& b, const Labels& c) {
        a.insert(a.end(), b.begin(), b.end());
        a.insert(a.end(), c.begin(), c.end());
        return a;
      };
      auto matrix = [&](const std::string& v, const Labels& from, const Labels& rows, const Labels& cols) {
        Shape shape = dims(batch);
        shape.push_back(numel(dims(rows)));
        shape.push_back(numel(dims(cols)));
        return st.reshape(permuted(v, from, joined(batch, rows, cols)), shape);
      };
      const std::string a = matrix(summed[0], in[0], own_a, contracted);
      const std::string b = matrix(summed[1], in[1], contracted, own_b);
      const Labels product = joined(batch, own_a, own_b);
      result = permuted(st.reshape(st.op(Op::matmul, {a, b}), dims(product)), product, out);
    }
    if (!st.status.ok()) return st.status;
    values_[node.output(0)] = *find(result);
    return Status::success();
  }

  /// Max, Min, Sum, Mean over any number of inputs: a chain of binary operators (Mean divides
  /// the sum by the count).
  Status variadic(const ::onnx::NodeProto& node) {
    const std::string& op = node.op_type();
    std::vector<std::string> operands = present_inputs(static_cast<std::size_t>(node.input_size()));
    if (operands.empty() || operands.size() != static_cast<std::size_t>(node.input_size())) {
      return Error{ErrorCode::parse, op + " needs its inputs"};
    }
    const Op step = op == "Max" ? Op::max : op == "Min" ? Op::min : Op::add;
    const std::string& out = node.output(0);
    const bool divide = op == "Mean" && operands.size() > 1;
    std::string acc = operands[0];
    for (std::size_t k = 1; k < operands.size(); ++k) {
      const std::string next = k + 1 == operands.size() && !divide ? out : fresh_name(out);
      if (Status s = emit(step, {acc, operands[k]}, {}, next); !s.ok()) return s;
      acc = next;
    }
    if (divide) {
      if (Status s = emit(Op::div, {acc, scalar(out, static_cast<double>(operands.size()))}, {}, out); !s.ok()) return s;
    } else if (operands.size() == 1) {
      values_[out] = *find(acc);
    }
    return only_outputs(node, 1);
  }

  /// Split into Slices along the axis: the sizes from the split attribute (before opset 13) or
  /// input, else equal parts.
  Status split(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(1); !s.ok()) return s;
    const Shape shape = shape_of(*find(input(0)));
    Result<std::int64_t> axis_attr = attrs.get_int("axis", 0);
    if (!axis_attr.ok()) return axis_attr.error();
    const std::optional<std::int64_t> axis = normalize_axis(*axis_attr, shape.size());
    if (!axis) return invalid("axis " + std::to_string(*axis_attr) + " out of range for " + to_string(shape));
    const std::int64_t dim = shape[static_cast<std::size_t>(*axis)];
    const auto parts = static_cast<std::int64_t>(node.output_size());
    Result<Ints> sizes = since_ >= 13 ? int_list_input(1, Ints{}) : attrs.get_ints("split", {});
    if (!sizes.ok()) return sizes.error();
    Result<std::int64_t> num_outputs = attrs.get_int("num_outputs", 0);  // Split-18
    if (!num_outputs.ok()) return num_outputs.error();
    if (*num_outputs != 0 && (*num_outputs != parts || !sizes->empty())) {
      return invalid("num_outputs " + std::to_string(*num_outputs) + " with " + std::to_string(parts) + " outputs" +
                     (sizes->empty() ? "" : " and split sizes"));
    }
    if (sizes->empty() && *num_outputs != 0) {
      // Split-18 by count: equal parts of ceil(dim / parts), the last one smaller.
      const std::int64_t chunk = (dim + parts - 1) / parts;
      for (std::int64_t k = 0; k < parts; ++k) sizes->push_back(std::clamp<std::int64_t>(dim - k * chunk, 0, chunk));
    } else if (sizes->empty()) {
      if (dim % parts != 0) return invalid("dimension " + std::to_string(dim) + " does not split into " + std::to_string(parts) + " equal parts");
      sizes->assign(static_cast<std::size_t>(parts), dim / parts);
    }
    if (static_cast<std::int64_t>(sizes->size()) != parts) {
      return invalid(std::to_string(sizes->size()) + " split sizes for " + std::to_string(parts) + " outputs");
    }
    std::int64_t start = 0;
    for (std::int64_t k = 0; k < parts; ++k) {
      const std::int64_t size = (*sizes)[static_cast<std::size_t>(k)];
      if (size < 0 || size > dim - start) return invalid("split sizes " + to_string(*sizes) + " do not add up to " + std::to_string(dim));
      const std::string& out = node.output(static_cast<int>(k));
      if (!out.empty()) {
        Attributes a;
        a.set("starts", Ints{start});
        a.set("ends", Ints{start + size});
        a.set("axes", Ints{*axis});
        if (Status s = emit(Op::slice, {input(0)}, std::move(a), out); !s.ok()) return s;
      }
      start += size;
    }
    if (start != dim) return invalid("split sizes " + to_string(*sizes) + " do not add up to " + std::to_string(dim));
    return Status::success();
  }

  /// Softmax before opset 13: over the input coerced to 2-D at `axis` (default 1). Over the last
  /// axis that is the IR's softmax; otherwise Reshape to 2-D, Softmax, Reshape back.
  Status legacy_softmax(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(1); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    const Shape shape = shape_of(*find(input(0)));
    Result<std::int64_t> axis_attr = attrs.get_int("axis", 1);
    if (!axis_attr.ok()) return axis_attr.error();
    const auto rank = static_cast<std::int64_t>(shape.size());
    const std::int64_t axis = *axis_attr < 0 ? *axis_attr + rank : *axis_attr;
    if (axis < 0 || axis > rank || shape.empty()) return invalid("axis " + std::to_string(*axis_attr) + " out of range for " + to_string(shape));
    const std::string& out = node.output(0);
    Attributes soft;
    if (axis == rank - 1) {
      soft.set("axis", axis);
      return emit(Op::softmax, {input(0)}, std::move(soft), out);
    }
    const auto a = static_cast<std::size_t>(axis);
    Attributes to_2d;
    to_2d.set("shape", Ints{product(shape, 0, a), product(shape, a, shape.size())});
    to_2d.set("allowzero", 1);
    const std::string flat = fresh_name(out);
    const std::string normalised = fresh_name(out);
    if (Status s = emit(Op::reshape, {input(0)}, std::move(to_2d), flat); !s.ok()) return s;
    soft.set("axis", 1);
    if (Status s = emit(Op::softmax, {flat}, std::move(soft), normalised); !s.ok()) return s;
    Attributes back;
    back.set("shape", shape);
    back.set("allowzero", 1);
    return emit(Op::reshape, {normalised}, std::move(back), out);
  }

  // -------------------------------------------------------------------------------------------
  // Operators the IR lacks, lowered to IR subgraphs (so every backend runs them).

  /// A fresh load-time value named after `base`.
  std::string constant(const std::string& base, OnnxTensor value) {
    const std::string name = fresh_name(base);
    bind_constant(name, std::move(value));
    return name;
  }

  std::string scalar(const std::string& base, double v) { return constant(base, float_scalar(v)); }

  /// A chain of IR nodes computing one ONNX node's output: each step is a fresh value named after
  /// the output (or the output itself, for the last step); after the first error the steps do
  /// nothing and `status` keeps the error.
  struct Steps {
    Importer& importer;
    std::string out;
    Status status = Status::success();

    std::string op(Op o, const std::vector<std::string>& inputs, Attributes attrs = {}, bool last = false) {
      if (!status.ok()) return {};
      std::string name = last ? out : importer.fresh_name(out);
      status = importer.emit(o, inputs, std::move(attrs), name);
      return name;
    }
    std::string reshape(const std::string& x, const Shape& shape, bool last = false) {
      Attributes a;
      a.set("shape", shape);
      a.set("allowzero", 1);
      return op(Op::reshape, {x}, std::move(a), last);
    }
    std::string transpose(const std::string& x, Ints perm, bool last = false) {
      Attributes a;
      a.set("perm", std::move(perm));
      return op(Op::transpose, {x}, std::move(a), last);
    }
    /// Elements begin .. end - 1 of `x` along `axis`.
    std::string slice(const std::string& x, std::int64_t axis, std::int64_t begin, std::int64_t end) {
      Attributes a;
      a.set("starts", Ints{begin});
      a.set("ends", Ints{end});
      a.set("axes", Ints{axis});
      return op(Op::slice, {x}, std::move(a));
    }
    std::string scalar(double v) { return importer.scalar(out, v); }
    /// 1 where `v` > 0, else 0: Sign(Relu(v)), a comparison the IR lacks.
    std::string positive(const std::string& v) { return op(Op::sign, {op(Op::relu, {v})}); }
  };

  /// LRN: X / (bias + alpha / size * (sum of X^2 over `size` neighbouring channels))^beta, the
  /// channel sum as an average pool over [N, 1, C, rest] padded with zeros.
  Status lrn(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(1); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    Result<std::int64_t> size = attrs.get_int("size", 0);
    Result<float> alpha = attrs.get_float("alpha", 1e-4f);
    Result<float> beta = attrs.get_float("beta", 0.75f);
    Result<float> bias = attrs.get_float("bias", 1.0f);
    if (!size.ok()) return size.error();
    if (!alpha.ok()) return alpha.error();
    if (!beta.ok()) return beta.error();
    if (!bias.ok()) return bias.error();
    const std::string& x = input(0);
    const Shape shape = shape_of(*find(x));
    if (*size < 1 || *size > detail::kMaxDim) return invalid("size " + std::to_string(*size) + " is out of range");
    if (shape.size() < 2) return invalid("LRN needs [N, C, ...], not " + to_string(shape));
    const std::int64_t before = (*size - 1) / 2;
    Attributes pool;
    pool.set("kernel_shape", Ints{*size, 1});
    pool.set("pads", Ints{before, 0, *size - 1 - before, 0});
    pool.set("count_include_pad", 1);
    Steps st{*this, node.output(0)};
    const std::string flat = st.reshape(st.op(Op::mul, {x, x}), {shape[0], 1, shape[1], product(shape, 2, shape.size())});
    const std::string mean = st.reshape(st.op(Op::average_pool, {flat}, std::move(pool)), shape);
    const std::string base = st.op(Op::add, {st.op(Op::mul, {mean, st.scalar(*alpha)}), st.scalar(*bias)});
    st.op(Op::div, {x, st.op(Op::pow, {base, st.scalar(*beta)})}, {}, true);
    return st.status;
  }

  /// HardSwish (x * HardSigmoid(x) with alpha 1/6, beta 1/2), PRelu (relu(x) + slope * min(x, 0)),
  /// Elu (relu(x) + alpha * (exp(min(x, 0)) - 1)), Selu (gamma times Elu), Celu (Elu of x / alpha
  /// scaled by alpha below 0), Softplus, Mish (x * tanh(Softplus(x))), Softsign (x / (1 + |x|)),
  /// Swish (x * sigmoid(alpha * x)), Gelu (its erf form, or the tanh approximation),
  /// ThresholdedRelu and Shrink. The last two multiply each kept branch by Steps::positive of its
  /// test, the branch clamped to its side of the threshold so that an infinity on the other side
  /// never meets a 0.
  Status activation(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    const std::string& op = node.op_type();
    if (Status s = need_inputs(op == "PRelu" ? 2 : 1); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    const std::string& x = input(0);
    Steps st{*this, node.output(0)};
    if (op == "HardSwish") {
      Attributes a;
      a.set("alpha", 1.0 / 6);
      a.set("beta", 0.5);
      st.op(Op::mul, {x, st.op(Op::hard_sigmoid, {x}, std::move(a))}, {}, true);
    } else if (op == "PRelu") {
      const std::string negative = st.op(Op::mul, {st.op(Op::min, {x, st.scalar(0)}), input(1)});
      st.op(Op::add, {st.op(Op::relu, {x}), negative}, {}, true);
    } else if (op == "Elu" || op == "Selu" || op == "Celu") {
      const bool selu = op == "Selu";
      Result<float> alpha = attrs.get_float("alpha", selu ? 1.67326319217681884765625f : 1.0f);
      Result<float> gamma = attrs.get_float("gamma", 1.05070102214813232421875f);
      if (!alpha.ok()) return alpha.error();
      if (!gamma.ok()) return gamma.error();
      if (op == "Celu" && *alpha == 0.0f) return invalid("alpha 0");
      std::string negative = st.op(Op::min, {x, st.scalar(0)});
      if (op == "Celu") negative = st.op(Op::div, {negative, st.scalar(*alpha)});
      const std::string below = st.op(Op::mul, {st.op(Op::sub, {st.op(Op::exp, {negative}), st.scalar(1)}), st.scalar(*alpha)});
      const std::string both = st.op(Op::add, {st.op(Op::relu, {x}), below}, {}, !selu);
      if (selu) st.op(Op::mul, {both, st.scalar(*gamma)}, {}, true);
    } else if (op == "Softplus" || op == "Mish") {
      // Log(1 + Exp(x)) as Relu(x) + Log(1 + Exp(-|x|)), which does not overflow for large x.
      const std::string tail = st.op(Op::log, {st.op(Op::add, {st.op(Op::exp, {st.op(Op::neg, {st.op(Op::abs, {x})})}), st.scalar(1)})});
      const std::string softplus = st.op(Op::add, {st.op(Op::relu, {x}), tail}, {}, op == "Softplus");
      if (op == "Mish") st.op(Op::mul, {x, st.op(Op::tanh, {softplus})}, {}, true);
    } else if (op == "Softsign") {
      st.op(Op::div, {x, st.op(Op::add, {st.op(Op::abs, {x}), st.scalar(1)})}, {}, true);
    } else if (op == "ThresholdedRelu") {
      // Max(x, alpha) * [x > alpha].
      Result<float> alpha = attrs.get_float("alpha", 1.0f);
      if (!alpha.ok()) return alpha.error();
      const std::string above = st.positive(st.op(Op::sub, {x, st.scalar(*alpha)}));
      st.op(Op::mul, {st.op(Op::max, {x, st.scalar(*alpha)}), above}, {}, true);
    } else if (op == "Shrink") {
      // (Max(x, lambd) - bias) * [x > lambd] + (Min(x, -lambd) + bias) * [x < -lambd]; for a
      // negative lambd, where both hold, ONNX takes the second.
      Result<float> lambd = attrs.get_float("lambd", 0.5f);
      Result<float> bias = attrs.get_float("bias", 0.0f);
      if (!lambd.ok()) return lambd.error();
      if (!bias.ok()) return bias.error();
      const std::string below = st.positive(st.op(Op::sub, {st.scalar(-*lambd), x}));
      std::string above = st.positive(st.op(Op::sub, {x, st.scalar(*lambd)}));
      if (*lambd < 0) above = st.op(Op::mul, {above, st.op(Op::sub, {st.scalar(1), below})});
      const std::string high = st.op(Op::mul, {st.op(Op::sub, {st.op(Op::max, {x, st.scalar(*lambd)}), st.scalar(*bias)}), above});
      const std::string low = st.op(Op::mul, {st.op(Op::add, {st.op(Op::min, {x, st.scalar(-*lambd)}), st.scalar(*bias)}), below});
      st.op(Op::add, {high, low}, {}, true);
    } else if (op == "Swish") {
      Result<float> alpha = attrs.get_float("alpha", 1.0f);
      if (!alpha.ok()) return alpha.error();
      const std::string scaled = *alpha == 1.0f ? x : st.op(Op::mul, {x, st.scalar(*alpha)});
      st.op(Op::mul, {x, st.op(Op::sigmoid, {scaled})}, {}, true);
    } else {
      Result<std::string> approximate = attrs.get_string("approximate", "none");
      if (!approximate.ok()) return approximate.error();
      std::string inner;
      if (*approximate == "none") {
        inner = st.op(Op::erf, {st.op(Op::mul, {x, st.scalar(0.70710678118654752)})});
      } else if (*approximate == "tanh") {
        const std::string cube = st.op(Op::mul, {st.op(Op::mul, {x, x}), x});
        const std::string poly = st.op(Op::add, {x, st.op(Op::mul, {cube, st.scalar(0.044715)})});
        inner = st.op(Op::tanh, {st.op(Op::mul, {poly, st.scalar(0.79788456080286536)})});
      } else {
        return unsupported("approximate '" + *approximate + "'");
      }
      const std::string half_x = st.op(Op::mul, {x, st.scalar(0.5)});
      st.op(Op::mul, {half_x, st.op(Op::add, {inner, st.scalar(1)})}, {}, true);
    }
    return st.status;
  }

  /// `x` broadcast to `target` (with numpy's rules) as value `out`: x times ones over the
  /// stretched dimensions, which is exact for every value.
  Status broadcast_to(const std::string& x, const Shape& target, const std::string& out) {
    const Shape shape = shape_of(*find(x));
    const std::optional<Shape> result = broadcast_shapes(shape, target);
    if (!result) return invalid("shape " + to_string(shape) + " does not broadcast to " + to_string(target));
    if (*result == shape) {
      values_[out] = *find(x);
      return Status::success();
    }
    OnnxTensor ones;
    ones.shape = *result;
    for (std::size_t k = 0; k < ones.shape.size(); ++k) {
      const std::size_t offset = ones.shape.size() - k - 1;
      if (k < shape.size() && shape[shape.size() - k - 1] == ones.shape[offset]) ones.shape[offset] = 1;
    }
    const std::optional<std::int64_t> n = detail::checked_numel(ones.shape, fold_limit_);
    if (!n) return invalid("the broadcast to " + to_string(*result) + " is too large");
    ones.reals.assign(static_cast<std::size_t>(*n), 1.0f);
    return emit(Op::mul, {x, constant(out, std::move(ones))}, {}, out);
  }

  Status expand(const ::onnx::NodeProto& node) {
    if (Status s = need_inputs(2); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    Result<Ints> target = int_list_input(1);
    if (!target.ok()) return target.error();
    for (std::int64_t d : *target) {
      if (d < 0 || d > detail::kMaxDim) return invalid("shape " + to_string(*target) + " is out of range");
    }
    return broadcast_to(input(0), *target, node.output(0));
  }

  /// Where of run-time values at a load-time condition: the IR has no selection, so with masks
  /// T (+inf where the condition holds, -inf elsewhere) and F (its opposite) it is
  /// Max(Min(x, T), Min(y, F)), exact for every value but a NaN in the branch not taken, which
  /// propagates. A condition that is the same everywhere broadcasts that branch alone.
  Status where(const ::onnx::NodeProto& node) {
    if (Status s = need_inputs(3); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    Result<const OnnxTensor*> cond = load_time(0);
    if (!cond.ok()) return cond.error();
    const OnnxTensor& c = **cond;
    std::optional<Shape> result = broadcast_shapes(c.shape, shape_of(*find(input(1))));
    if (result) result = broadcast_shapes(*result, shape_of(*find(input(2))));
    if (!result) return invalid("the condition and values do not broadcast together");
    OnnxTensor when_true, when_false;
    when_true.shape = when_false.shape = c.shape;
    const auto n = static_cast<std::size_t>(c.size());
    constexpr float kInf = std::numeric_limits<float>::infinity();
    std::size_t holding = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const bool holds = is_real_type(c.type) ? c.reals[k] != 0.0f : c.ints[k] != 0;
      holding += holds ? 1 : 0;
      when_true.reals.push_back(holds ? kInf : -kInf);
      when_false.reals.push_back(holds ? -kInf : kInf);
    }
    if (holding == n || holding == 0) return broadcast_to(input(holding == n ? 1 : 2), *result, node.output(0));
    Steps st{*this, node.output(0)};
    const std::string x = st.op(Op::min, {input(1), constant(node.output(0), std::move(when_true))});
    const std::string y = st.op(Op::min, {input(2), constant(node.output(0), std::move(when_false))});
    st.op(Op::max, {x, y}, {}, true);
    return st.status;
  }

  /// Gather: at load-time indices as slices along the axis where few slices do, else (and at
  /// run-time indices, which bound their integer input) the IR's gather. Copies, not references,
  /// of values: emitting nodes adds values, which may move the map's entries.
  Status gather(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(2); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    const Value indices = *find(input(1));
    const ElemType index_type = indices.constant ? indices.constant->type : indices.type;
    if (!is_integer_type(index_type) || index_type == ElemType::boolean) return invalid("the indices must be integers");
    const Shape shape = shape_of(*find(input(0)));
    Result<std::int64_t> axis_attr = attrs.get_int("axis", 0);
    if (!axis_attr.ok()) return axis_attr.error();
    const std::optional<std::int64_t> axis = normalize_axis(*axis_attr, shape.size());
    if (!axis) return invalid("axis " + std::to_string(*axis_attr) + " out of range for " + to_string(shape));
    const auto a = static_cast<std::size_t>(*axis);
    const std::string& out = node.output(0);
    Attributes ir_attrs;
    ir_attrs.set("axis", *axis);
    if (!indices.constant) {
      if (indices.integer_input < 0) return unsupported("a gather at indices computed at run time");
      if (shape[a] > kMaxExactInteger) return unsupported("a gather at run-time indices along an axis over 2^24");
      std::int64_t& bound = index_bounds_[indices.integer_input];
      bound = bound == 0 ? shape[a] : std::min(bound, shape[a]);
      return emit(Op::gather, {input(0), input(1)}, ir_attrs, out);
    }
    Ints picked;
    for (std::int64_t i : indices.constant->ints) {
      if (i < -shape[a] || i >= shape[a]) return invalid("index " + std::to_string(i) + " out of range for dimension " + std::to_string(shape[a]));
      picked.push_back(i < 0 ? i + shape[a] : i);
    }
    return gather_rows(input(0), a, picked, indices.constant->shape, out);
  }

  /// Rows `picked` (in range, non-negative) of `x` along `axis`, laid out in `index_shape`, as
  /// value `out`: a few slices (kMaxGatherSlices), else the IR's gather over a constant index tensor.
  Status gather_rows(const std::string& x, std::size_t axis, const Ints& picked, const Shape& index_shape,
                     const std::string& out) {
    const Shape shape = shape_of(*find(x));
    const auto a = static_cast<std::ptrdiff_t>(axis);
    Shape result(shape.begin(), shape.begin() + a);
    result.insert(result.end(), index_shape.begin(), index_shape.end());
    result.insert(result.end(), shape.begin() + a + 1, shape.end());
    const bool reshaped = result.size() != shape.size();
    const std::string selected = reshaped ? fresh_name(out) : out;
    Result<bool> done = select_along_axis(x, axis, picked, selected, kMaxGatherSlices);
    if (!done.ok()) return done.error();
    if (!*done) {
      if (shape[axis] > kMaxExactInteger) {
        return unsupported("a gather of " + std::to_string(picked.size()) + " scattered indices along an axis over 2^24");
      }
      OnnxTensor rows;
      rows.shape = index_shape;
      rows.reals.assign(picked.begin(), picked.end());
      Attributes attrs;
      attrs.set("axis", static_cast<std::int64_t>(axis));
      return emit(Op::gather, {x, constant(out, std::move(rows))}, attrs, out);
    }
    if (!reshaped) return Status::success();
    Steps st{*this, out};
    st.reshape(selected, result, true);
    return st.status;
  }

  /// `x` with its first `count` dimensions made one (a reshape of run-time data): the axis
  /// GatherElements and GatherND pick flat positions from.
  std::string leading_flattened(Steps& st, const std::string& x, std::size_t count) {
    const Shape shape = shape_of(*find(x));
    Shape flat{product(shape, 0, count)};
    flat.insert(flat.end(), shape.begin() + static_cast<std::ptrdiff_t>(count), shape.end());
    return flat == shape ? x : st.reshape(x, flat);
  }

  /// Input 1 of the current GatherElements or GatherND: integers known at load time.
  Result<const OnnxTensor*> load_time_indices(const ::onnx::NodeProto& node) const {
    if (Status s = need_inputs(2); !s.ok()) return s.error();
    if (Status s = only_outputs(node, 1); !s.ok()) return s.error();
    Result<const OnnxTensor*> indices = load_time(1);
    if (!indices.ok()) return indices.error();
    if (!is_integer_type((*indices)->type) || (*indices)->type == ElemType::boolean) return invalid("the indices must be integers");
    return indices;
  }

  /// GatherElements at load-time indices: data flattened, each output element picking its flat
  /// position (the index along the axis, its own coordinates elsewhere).
  Status gather_elements(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    Result<const OnnxTensor*> indices = load_time_indices(node);
    if (!indices.ok()) return indices.error();
    const OnnxTensor& idx = **indices;
    const Shape shape = shape_of(*find(input(0)));
    Result<std::int64_t> axis_attr = attrs.get_int("axis", 0);
    if (!axis_attr.ok()) return axis_attr.error();
    const std::optional<std::int64_t> axis = normalize_axis(*axis_attr, shape.size());
    if (!axis || idx.shape.size() != shape.size()) return invalid("the indices must have the data's rank and an axis in it");
    const auto a = static_cast<std::size_t>(*axis);
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (d != a && idx.shape[d] > shape[d]) return invalid("indices " + to_string(idx.shape) + " exceed the data " + to_string(shape));
    }
    const Ints strides = row_major_strides(shape);
    Ints picked;
    for (std::int64_t p = 0; p < idx.size(); ++p) {
      const Ints at = unravel_index(p, idx.shape);
      const std::int64_t i = idx.ints[static_cast<std::size_t>(p)];
      if (i < -shape[a] || i >= shape[a]) return invalid("index " + std::to_string(i) + " out of range for dimension " + std::to_string(shape[a]));
      std::int64_t flat = 0;
      for (std::size_t d = 0; d < shape.size(); ++d) flat += (d == a ? (i < 0 ? i + shape[a] : i) : at[d]) * strides[d];
      picked.push_back(flat);
    }
    Steps st{*this, node.output(0)};
    const std::string flat = leading_flattened(st, input(0), shape.size());
    if (!st.status.ok()) return st.status;
    return gather_rows(flat, 0, picked, idx.shape, node.output(0));
  }

  /// GatherND at load-time indices: data's first batch_dims + k dimensions flattened, each index
  /// tuple (after its batch coordinates) a flat row.
  Status gather_nd(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    Result<const OnnxTensor*> indices = load_time_indices(node);
    if (!indices.ok()) return indices.error();
    const OnnxTensor& idx = **indices;
    if (idx.shape.empty()) return invalid("the indices must have a rank of 1 or more");
    const Shape shape = shape_of(*find(input(0)));
    Result<std::int64_t> batch_attr = attrs.get_int("batch_dims", 0);
    if (!batch_attr.ok()) return batch_attr.error();
    const auto batch = static_cast<std::size_t>(std::max<std::int64_t>(*batch_attr, 0));
    const auto k = static_cast<std::size_t>(idx.shape.back());
    if (*batch_attr < 0 || batch >= idx.shape.size() || batch + k > shape.size()) {
      return invalid("batch_dims " + std::to_string(*batch_attr) + " and tuples of " + std::to_string(k) + " do not fit data " +
                     to_string(shape) + " and indices " + to_string(idx.shape));
    }
    for (std::size_t d = 0; d < batch; ++d) {
      if (idx.shape[d] != shape[d]) return invalid("the batch dimensions of indices " + to_string(idx.shape) + " and data " + to_string(shape) + " differ");
    }
    const Shape leading(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(batch + k));
    const Ints strides = row_major_strides(leading);
    const Shape tuples(idx.shape.begin(), idx.shape.end() - 1);
    Ints picked;
    for (std::int64_t t = 0; t < numel(tuples); ++t) {
      const Ints at = unravel_index(t, tuples);
      std::int64_t flat = 0;
      for (std::size_t d = 0; d < batch; ++d) flat += at[d] * strides[d];
      for (std::size_t j = 0; j < k; ++j) {
        const std::size_t d = batch + j;
        const std::int64_t i = idx.ints[static_cast<std::size_t>(t) * k + j];
        if (i < -shape[d] || i >= shape[d]) return invalid("index " + std::to_string(i) + " out of range for dimension " + std::to_string(shape[d]));
        flat += (i < 0 ? i + shape[d] : i) * strides[d];
      }
      picked.push_back(flat);
    }
    Steps st{*this, node.output(0)};
    const std::string flat = leading_flattened(st, input(0), batch + k);
    if (!st.status.ok()) return st.status;
    return gather_rows(flat, 0, picked, tuples, node.output(0));
  }

  /// The elements of `x` at `indices` along `axis` as value `out`, exactly: `x` itself, each
  /// element repeated k times (reshape, times ones, reshape), or slices of strided runs joined
  /// by a concat. False when that takes more than `max_slices` slices.
  Result<bool> select_along_axis(const std::string& x, std::size_t axis, const Ints& indices, const std::string& out,
                                 std::size_t max_slices = 64) {
    const Shape shape = shape_of(*find(x));
    const std::int64_t n = shape[axis];
    const auto m = static_cast<std::int64_t>(indices.size());
    const auto repeats = [&](std::int64_t k) {
      for (std::int64_t i = 0; i < m; ++i) {
        if (indices[static_cast<std::size_t>(i)] != i / k) return false;
      }
      return true;
    };
    Steps st{*this, out};
    if (n > 0 && m > 0 && m % n == 0 && repeats(m / n)) {
      if (m == n) {
        values_[out] = *find(x);
        return true;
      }
      Shape split = shape;
      split.insert(split.begin() + static_cast<std::ptrdiff_t>(axis) + 1, 1);
      OnnxTensor ones;
      ones.shape.assign(split.size(), 1);
      ones.shape[axis + 1] = m / n;
      ones.reals.assign(static_cast<std::size_t>(m / n), 1.0f);
      Shape result = shape;
      result[axis] = m;
      st.reshape(st.op(Op::mul, {st.reshape(x, split), constant(out, std::move(ones))}), result, true);
      if (!st.status.ok()) return st.status.error();
      return true;
    }
    std::vector<std::array<std::int64_t, 3>> runs;  // start, step, count
    for (std::int64_t i : indices) {
      if (!runs.empty()) {
        auto& [start, step, count] = runs.back();
        const std::int64_t next = i - (start + step * (count - 1));
        if (count == 1 && next >= 1) step = next;
        if (next >= 1 && next == step) {
          ++count;
          continue;
        }
      }
      runs.push_back({i, 1, 1});
    }
    if (runs.empty() || runs.size() > max_slices) return false;
    std::vector<std::string> pieces;
    for (const auto& [start, step, count] : runs) {
      Attributes a;
      a.set("starts", Ints{start});
      a.set("ends", Ints{start + step * (count - 1) + 1});
      a.set("axes", Ints{static_cast<std::int64_t>(axis)});
      a.set("steps", Ints{step});
      pieces.push_back(st.op(Op::slice, {x}, std::move(a), runs.size() == 1));
    }
    if (runs.size() > 1) {
      Attributes a;
      a.set("axis", static_cast<std::int64_t>(axis));
      st.op(Op::concat, pieces, std::move(a), true);
    }
    if (!st.status.ok()) return st.status.error();
    return true;
  }

  /// `x` interpolated along `axis` by `taps` (one per output index) as value `out`: a matmul
  /// with the [out, in] weight matrix, on the right for the last axis, else on the left of x
  /// viewed as [before, in, after].
  Status interpolate_along_axis(const std::string& x, std::size_t axis, const std::vector<detail::Taps>& taps, const std::string& out) {
    const Shape shape = shape_of(*find(x));
    const std::int64_t n = shape[axis];
    const auto m = static_cast<std::int64_t>(taps.size());
    const bool last_axis = axis + 1 == shape.size();
    if (n > fold_limit_ / m) {
      return unsupported("an interpolation matrix of " + std::to_string(m) + " x " + std::to_string(n) + " elements");
    }
    OnnxTensor weights;
    weights.shape = last_axis ? Shape{n, m} : Shape{m, n};
    weights.reals.assign(static_cast<std::size_t>(n * m), 0.0f);
    for (std::int64_t i = 0; i < m; ++i) {
      for (const auto& [j, w] : taps[static_cast<std::size_t>(i)]) {
        weights.reals[static_cast<std::size_t>(last_axis ? j * m + i : i * n + j)] += static_cast<float>(w);
      }
    }
    const std::string matrix = constant(out, std::move(weights));
    Steps st{*this, out};
    if (last_axis) {
      st.op(Op::matmul, {x, matrix}, {}, true);
    } else {
      Shape result = shape;
      result[axis] = m;
      const std::string view = st.reshape(x, {product(shape, 0, axis), n, product(shape, axis + 1, shape.size())});
      st.reshape(st.op(Op::matmul, {matrix, view}), result, true);
    }
    return st.status;
  }

  /// The float list of optional load-time input `k` (empty when absent).
  Result<std::vector<double>> float_list_input(std::size_t k) const {
    Result<const OnnxTensor*> t = load_time(k);
    if (!t.ok()) return t.error();
    std::vector<double> list;
    if (*t == nullptr) return list;
    if (!is_real_type((*t)->type) || (*t)->shape.size() > 1) {
      return invalid("input " + std::to_string(k) + " ('" + input(k) + "') must be a 1-D float tensor");
    }
    for (float v : (*t)->reals) list.push_back(v);
    return list;
  }

  /// Resize's interpolation attributes (opset 11 on).
  static Result<detail::ResizeSpec> resize_spec_of(const NodeAttrs& attrs, const std::string& mode) {
    Result<std::string> coordinates = attrs.get_string("coordinate_transformation_mode", "half_pixel");
    Result<std::string> nearest = attrs.get_string("nearest_mode", "round_prefer_floor");
    Result<float> cubic_a = attrs.get_float("cubic_coeff_a", -0.75f);
    Result<std::int64_t> exclude = attrs.get_int("exclude_outside", 0);
    if (!coordinates.ok()) return coordinates.error();
    if (!nearest.ok()) return nearest.error();
    if (!cubic_a.ok()) return cubic_a.error();
    if (!exclude.ok()) return exclude.error();
    return detail::resize_spec(mode, *coordinates, *nearest, *cubic_a, *exclude != 0);
  }

  /// Resize and Upsample: each resized axis in turn, as a selection when every output copies one
  /// input element, else as an interpolation matmul. Upsample and Resize-10 map coordinates
  /// asymmetrically (x / scale) and take the floor for nearest.
  Status resize(const ::onnx::NodeProto& node, const NodeAttrs& attrs) {
    if (Status s = need_inputs(1); !s.ok()) return s;
    if (Status s = only_outputs(node, 1); !s.ok()) return s;
    const std::string& x = input(0);
    const std::string& out = node.output(0);
    const Shape shape = shape_of(*find(x));
    const bool upsample = node.op_type() == "Upsample";
    const bool legacy = upsample || since_ < 11;
    Result<std::string> mode = attrs.get_string("mode", "nearest");
    if (!mode.ok()) return mode.error();
    Result<detail::ResizeSpec> spec = legacy ? detail::resize_spec(*mode, "asymmetric", "floor", -0.75, false) : resize_spec_of(attrs, *mode);
    if (!spec.ok()) return spec.error();

    std::vector<double> scales;
    Ints sizes;
    if (upsample && since_ < 9) {
      Result<std::vector<float>> given = attrs.get_floats("scales", {});
      if (!given.ok()) return given.error();
      scales.assign(given->begin(), given->end());
    } else {
      Result<std::vector<double>> given = float_list_input(legacy ? 1 : 2);
      if (!given.ok()) return given.error();
      scales = std::move(given).value();
      Result<Ints> given_sizes = legacy ? Result<Ints>(Ints{}) : int_list_input(3, Ints{});
      if (!given_sizes.ok()) return given_sizes.error();
      sizes = std::move(given_sizes).value();
    }
    Result<Ints> axes_attr = attrs.get_ints("axes", {});  // Resize-18
    if (!axes_attr.ok()) return axes_attr.error();
    std::vector<std::size_t> axes;
    for (std::int64_t a : *axes_attr) {
      const std::optional<std::int64_t> axis = normalize_axis(a, shape.size());
      if (!axis) return invalid("axis " + std::to_string(a) + " out of range for rank " + std::to_string(shape.size()));
      axes.push_back(static_cast<std::size_t>(*axis));
    }
    if (axes.empty()) {
      for (std::size_t a = 0; a < shape.size(); ++a) axes.push_back(a);
    }
    if (scales.empty() == sizes.empty()) return invalid("Resize needs either scales or sizes");
    if (std::max(scales.size(), sizes.size()) != axes.size()) {
      return invalid(std::to_string(std::max(scales.size(), sizes.size())) + " scales or sizes for " + std::to_string(axes.size()) + " axes");
    }
    Result<std::string> policy = attrs.get_string("keep_aspect_ratio_policy", "stretch");
    if (!policy.ok()) return policy.error();
    if (!sizes.empty() && *policy != "stretch") {
      if (*policy != "not_larger" && *policy != "not_smaller") return unsupported("keep_aspect_ratio_policy '" + *policy + "'");
      double common = *policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
      for (std::size_t k = 0; k < axes.size(); ++k) {
        const double ratio = static_cast<double>(sizes[k]) / static_cast<double>(shape[axes[k]]);
        common = *policy == "not_larger" ? std::min(common, ratio) : std::max(common, ratio);
      }
      scales.assign(axes.size(), common);
      for (std::size_t k = 0; k < axes.size(); ++k) sizes[k] = static_cast<std::int64_t>(std::round(common * static_cast<double>(shape[axes[k]])));
    }
    Result<std::int64_t> antialias = attrs.get_int("antialias", 0);  // Resize-18
    if (!antialias.ok()) return antialias.error();

    // Axis by axis; an axis whose outputs copy its inputs in order is an alias (select_along_axis).
    std::string current = x;
    for (std::size_t k = 0; k < axes.size(); ++k) {
      const std::int64_t in = shape[axes[k]];
      const double scale = sizes.empty() ? scales[k] : static_cast<double>(sizes[k]) / static_cast<double>(in);
      if (!(scale > 0) || !std::isfinite(scale)) return invalid("scale " + std::to_string(scale) + " is not positive");
      const double length = sizes.empty() ? std::floor(static_cast<double>(in) * scale) : static_cast<double>(sizes[k]);
      if (length < 0 || length > static_cast<double>(detail::kMaxDim)) return invalid("the resized dimension is out of range");
      const auto size = static_cast<std::int64_t>(length);
      if (in == 0 || size == 0) return unsupported("a resize from or to an empty dimension");
      // The taps take memory at load time, and an interpolation matrix size * in elements.
      if (size > std::min(fold_limit_, kMaxResizedDim)) return invalid("the resized dimension " + std::to_string(size) + " is too large");
      if (*antialias != 0 && size < in && spec->mode != detail::ResizeMode::nearest) return unsupported("antialiased downsampling");
      const std::vector<detail::Taps> taps = detail::resize_taps(*spec, in, size, scale, !sizes.empty());
      const std::vector<std::int64_t> picked = detail::selected_indices(taps);
      const std::string next = k + 1 == axes.size() ? out : fresh_name(out);
      Result<bool> selected = picked.empty() ? Result<bool>(false) : select_along_axis(current, axes[k], picked, next);
      if (!selected.ok()) return selected.error();
      if (!*selected) {
        if (Status s = interpolate_along_axis(current, axes[k], taps, next); !s.ok()) return s;
      }
      current = next;
    }
    return Status::success();
  }

  const ReadOptions& options_;
  const std::vector<std::optional<std::string_view>>* raw_data_ = nullptr;
  std::int64_t fold_limit_;  ///< the most elements one folded constant may have
  int opset_ = 0;
  int since_ = 0;  ///< the opset that introduced the current node's definition
  Graph graph_;
  std::unordered_map<std::string, Value> values_;
  /// By integer input node: the smallest axis a Gather indexes with its values.
  std::map<int, std::int64_t> index_bounds_;
  std::unordered_set<std::string> reserved_;    ///< every value name of the model and every fresh one
  std::unordered_map<std::string, int> uses_;  ///< readers of each value (nodes and graph outputs)
  std::vector<std::string> inputs_;  ///< the current node's input names ("" when omitted)
  std::map<std::string, std::unique_ptr<MappedFile>> external_files_;  ///< by location
  std::map<std::string, std::int64_t> dims_in_order_;  ///< symbolic sizes taken from input_shapes_in_order
};

}  // namespace

Result<Graph> read_onnx_bytes(std::string_view bytes, const ReadOptions& options) {
  // Protobuf would copy every weight; parsed without them, the weights are read from `bytes`.
  std::optional<detail::StrippedModel> stripped = detail::strip_initializer_data(bytes);
  const std::string_view parsed = stripped ? std::string_view(stripped->bytes) : bytes;
  ::onnx::ModelProto model;
  if (parsed.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(parsed.data(), static_cast<int>(parsed.size()))) {
    return Error{ErrorCode::parse, "model: not an ONNX ModelProto (malformed or truncated)"};
  }
  if (Status s = detail::inline_local_functions(model); !s.ok()) return s.error();
  if (Status s = detail::sort_nodes(*model.mutable_graph()); !s.ok()) return s.error();
  return Importer(options).run(model, stripped ? stripped->raw_data : std::vector<std::optional<std::string_view>>{});
}

Result<Graph> read_onnx(const std::string& path, const ReadOptions& given) {
  ReadOptions options = given;
  if (options.external_data_dir.empty()) {
    const std::size_t slash = path.find_last_of('/');
    options.external_data_dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  }
  const MappedFile mapped(path);
  std::string copy;  // the file read whole, when it cannot be mapped
  if (!mapped.mapped()) {
    Result<std::string> bytes = read_file_bytes(path);
    if (!bytes.ok()) return bytes.error();
    copy = std::move(bytes).value();
  }
  Result<Graph> graph = read_onnx_bytes(mapped.mapped() ? mapped.bytes() : std::string_view(copy), options);
  if (!graph.ok()) return Error{graph.error().code, path + ": " + graph.error().message};
  return graph;
}

bool is_load_time_operand(std::string_view op_type, std::size_t index) {
  if (op_type == "Reshape" || op_type == "Squeeze" || op_type == "Unsqueeze" || op_type == "Expand" ||
      op_type == "Tile" || op_type.rfind("Reduce", 0) == 0 || op_type == "Split" || op_type == "Upsample" ||
      op_type == "GatherElements" || op_type == "GatherND") {
    return index == 1;
  }
  if (op_type == "Resize") return index >= 1;
  if (op_type == "Slice") return index >= 1 && index <= 4;
  if (op_type == "Pad" || op_type == "Clip" || op_type == "Dropout") return index >= 1;
  if (op_type == "ConstantOfShape" || op_type == "Range") return true;
  if (op_type == "RotaryEmbedding") return index == 3;  // position_ids
  return false;
}

}  // namespace tc
