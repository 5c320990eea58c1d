#pragma once

/// \file
/// Internal to examples/onnx/: a graph's nodes put in an order where each value is produced before
/// it is read. ONNX asks exporters for that order; ONNX Runtime sorts a graph itself, so models
/// written out of order run there and must read here too.

#include <onnx/onnx_pb.h>

#include <collage/support/result.hpp>

namespace tc::detail {

/// Leaves `graph`'s nodes as they are when every value a node reads is produced by an earlier
/// node (or is an input or initializer), else sorts them topologically, keeping the given order
/// wherever the dependencies allow. An error (code invalid_argument) naming a node on a cycle.
/// Values no node produces are left to the reader to report.
collage::Status sort_nodes(::onnx::GraphProto& graph);

}  // namespace tc::detail
