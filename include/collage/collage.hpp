#pragma once

/// \file
/// The whole collage core.

#include "collage/graph/dataflow_graph.hpp"
#include "collage/graph/dataflow_traits.hpp"
#include "collage/graph/op_kind.hpp"
#include "collage/partition/candidate.hpp"
#include "collage/partition/extraction.hpp"
#include "collage/partition/sub_graph.hpp"
#include "collage/partition/sub_graph_config.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/index_set.hpp"
#include "collage/support/index_span.hpp"
#include "collage/support/indexed_priority_queue.hpp"
#include "collage/support/name_supply.hpp"
#include "collage/support/result.hpp"
