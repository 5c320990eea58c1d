#pragma once

/// \file
/// dataflow_traits<G>: the customisation point that adapts a user IR to collage.
///
/// Specialise `collage::dataflow_traits<G>` for your graph type G with static members:
///
/// Required
///   using node_handle = ...;                       // cheap to copy, ==, std::hash
///   static Range roots(const G&);                  // result nodes, in order
///   static Range inputs(const G&, node_handle);    // dataflow inputs, in argument order
///
/// Optional (detected; the default is in brackets)
///   static OpKind kind(const G&, node_handle);             [OpKind::opaque]
///   static std::string op_name(const G&, node_handle);     [""]   used by patterns
///   static std::string label(const G&, node_handle);       [op_name, else the post-DFS index]
///   static bool is_inlinable(const G&, node_handle);       [false] op references, scalar constants
///   static bool is_tuple(const G&, node_handle);           [kind == OpKind::tuple]
///   static bool is_projection(const G&, node_handle);      [false] tuple field access
///   static std::size_t projection_index(const G&, node_handle); [0]
///   static bool is_constant(const G&, node_handle);        [false] tensor constants
///   static bool needs_kernel(const G&, node_handle);       [not inlinable, tuple, projection or constant]
///   static Scope scope(const G&, node_handle);             [one scope] any ==/std::hash type
///   static std::string signature(const G&, node_handle);   [op_name + "/" + kind] what makes two
///       nodes interchangeable for costing: op, attributes, shapes, dtypes. Cost caches key on it.
///
/// Range is anything a range-for can walk whose elements convert to node_handle.
///
/// DataflowGraph::build asks for kind, the flags, scope, op_name and signature once per node and
/// keeps the answers, so they must be pure functions of the node as it is when the graph is built
/// (an IR changed afterwards needs a new graph); label and projection_index are asked on use.

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collage/graph/op_kind.hpp"

namespace collage {

/// The customisation point. The primary template is deliberately empty: a graph type that has no
/// specialisation is reported by DataflowGraph's static_assert.
template <class G, class Enable = void>
struct dataflow_traits {};

namespace detail {

template <class T, class = void>
struct is_hashable : std::false_type {};
template <class T>
struct is_hashable<T, std::void_t<decltype(std::hash<T>{}(std::declval<const T&>()))>> : std::true_type {};

template <class T, class = void>
struct is_equality_comparable : std::false_type {};
template <class T>
struct is_equality_comparable<T, std::void_t<decltype(std::declval<const T&>() == std::declval<const T&>())>>
    : std::true_type {};

template <class T, class = void>
struct is_streamable : std::false_type {};
template <class T>
struct is_streamable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>>
    : std::true_type {};

template <class Traits, class = void>
struct has_node_handle : std::false_type {};
template <class Traits>
struct has_node_handle<Traits, std::void_t<typename Traits::node_handle>> : std::true_type {};

template <class Range, class Handle, class = void>
struct is_range_of : std::false_type {};
template <class Range, class Handle>
struct is_range_of<Range, Handle,
                   std::void_t<decltype(std::begin(std::declval<Range&>())), decltype(std::end(std::declval<Range&>()))>>
    : std::is_convertible<decltype(*std::begin(std::declval<Range&>())), Handle> {};

template <class G, class Traits, class = void>
struct has_roots : std::false_type {};
template <class G, class Traits>
struct has_roots<G, Traits, std::void_t<decltype(Traits::roots(std::declval<const G&>()))>>
    : is_range_of<decltype(Traits::roots(std::declval<const G&>())), typename Traits::node_handle> {};

template <class G, class Traits, class = void>
struct has_inputs : std::false_type {};
template <class G, class Traits>
struct has_inputs<G, Traits,
                  std::void_t<decltype(Traits::inputs(std::declval<const G&>(),
                                                      std::declval<const typename Traits::node_handle&>()))>>
    : is_range_of<decltype(Traits::inputs(std::declval<const G&>(), std::declval<const typename Traits::node_handle&>())),
                  typename Traits::node_handle> {};

template <class G, class Traits, bool HasHandle = has_node_handle<Traits>::value>
struct models_dataflow_traits : std::false_type {};
template <class G, class Traits>
struct models_dataflow_traits<G, Traits, true>
    : std::bool_constant<has_roots<G, Traits>::value && has_inputs<G, Traits>::value &&
                         is_hashable<typename Traits::node_handle>::value &&
                         is_equality_comparable<typename Traits::node_handle>::value> {};

// Detection of the optional members. Each COLLAGE_DETAIL_OPTIONAL(name) defines has_<name>.
#define COLLAGE_DETAIL_OPTIONAL(name)                                                                        \
  template <class G, class Traits, class = void>                                                             \
  struct has_##name : std::false_type {};                                                                    \
  template <class G, class Traits>                                                                           \
  struct has_##name<G, Traits,                                                                               \
                    std::void_t<decltype(Traits::name(std::declval<const G&>(),                              \
                                                      std::declval<const typename Traits::node_handle&>()))>> \
      : std::true_type {};
COLLAGE_DETAIL_OPTIONAL(kind)
COLLAGE_DETAIL_OPTIONAL(op_name)
COLLAGE_DETAIL_OPTIONAL(label)
COLLAGE_DETAIL_OPTIONAL(is_inlinable)
COLLAGE_DETAIL_OPTIONAL(is_tuple)
COLLAGE_DETAIL_OPTIONAL(is_projection)
COLLAGE_DETAIL_OPTIONAL(projection_index)
COLLAGE_DETAIL_OPTIONAL(is_constant)
COLLAGE_DETAIL_OPTIONAL(needs_kernel)
COLLAGE_DETAIL_OPTIONAL(scope)
COLLAGE_DETAIL_OPTIONAL(signature)
#undef COLLAGE_DETAIL_OPTIONAL

/// Stands in for the traits of a type that does not model them, so that the one static_assert in
/// DataflowGraph is the only diagnostic.
template <class G>
struct placeholder_traits {
  using node_handle = int;
  static std::vector<int> roots(const G&) { return {}; }
  static std::vector<int> inputs(const G&, int) { return {}; }
};

/// Calls the optional members of Traits, or supplies their defaults.
template <class G, class Traits>
struct traits_access {
  using node_handle = typename Traits::node_handle;

  static OpKind kind(const G& g, const node_handle& n) {
    if constexpr (has_kind<G, Traits>::value) {
      return static_cast<OpKind>(Traits::kind(g, n));
    } else {
      return OpKind::opaque;
    }
  }
  static std::string op_name(const G& g, const node_handle& n) {
    if constexpr (has_op_name<G, Traits>::value) {
      return std::string(Traits::op_name(g, n));
    } else {
      return std::string();
    }
  }
  /// The traits' label, else the op name; may be empty (the graph then uses the index).
  static std::string label(const G& g, const node_handle& n) {
    if constexpr (has_label<G, Traits>::value) {
      return std::string(Traits::label(g, n));
    } else {
      return op_name(g, n);
    }
  }
  static bool is_inlinable(const G& g, const node_handle& n) {
    if constexpr (has_is_inlinable<G, Traits>::value) {
      return Traits::is_inlinable(g, n);
    } else {
      return false;
    }
  }
  static bool is_tuple(const G& g, const node_handle& n) {
    if constexpr (has_is_tuple<G, Traits>::value) {
      return Traits::is_tuple(g, n);
    } else {
      return kind(g, n) == OpKind::tuple;
    }
  }
  static bool is_projection(const G& g, const node_handle& n) {
    if constexpr (has_is_projection<G, Traits>::value) {
      return Traits::is_projection(g, n);
    } else {
      return false;
    }
  }
  static std::size_t projection_index(const G& g, const node_handle& n) {
    if constexpr (has_projection_index<G, Traits>::value) {
      return static_cast<std::size_t>(Traits::projection_index(g, n));
    } else {
      return 0;
    }
  }
  static bool is_constant(const G& g, const node_handle& n) {
    if constexpr (has_is_constant<G, Traits>::value) {
      return Traits::is_constant(g, n);
    } else {
      return false;
    }
  }
  static bool needs_kernel(const G& g, const node_handle& n) {
    if constexpr (has_needs_kernel<G, Traits>::value) {
      return Traits::needs_kernel(g, n);
    } else {
      return !(is_inlinable(g, n) || is_tuple(g, n) || is_projection(g, n) || is_constant(g, n));
    }
  }
  /// What makes two nodes interchangeable for costing (see the file comment).
  static std::string signature(const G& g, const node_handle& n) {
    if constexpr (has_signature<G, Traits>::value) {
      return std::string(Traits::signature(g, n));
    } else {
      return op_name(g, n) + "/" + std::string(to_string(kind(g, n)));
    }
  }
  static constexpr bool has_scopes = has_scope<G, Traits>::value;
  /// Whether the traits define signature (else it is derived from the op name and kind).
  static constexpr bool has_own_signature = has_signature<G, Traits>::value;
};

}  // namespace detail

/// True when dataflow_traits<G> provides node_handle (hashable, ==), roots and inputs.
template <class G>
inline constexpr bool is_dataflow_graph_v = detail::models_dataflow_traits<G, dataflow_traits<G>>::value;

#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
/// C++20: the concept form of is_dataflow_graph_v, for constraining user templates.
template <class G>
concept dataflow_graph = is_dataflow_graph_v<G>;
#endif

}  // namespace collage
