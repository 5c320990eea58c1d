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
/// Range is anything a range-for can walk whose elements convert to node_handle. The graph is
/// passed as a const reference and the handle as a const lvalue, so take them as `const G&` and
/// `node_handle` or `const node_handle&`. A member returning std::string may return anything a
/// std::string can be made from (const std::string&, std::string_view, const char*), and
/// projection_index any integer type; kind returns collage::OpKind itself and the flags bool.
///
/// Near misses are compile errors, one static_assert each, naming the member and the signature
/// expected: a required member that is missing or cannot be called as above; an optional member
/// (any member of one of the names above) that cannot be called as above or returns another
/// type; and a member named as an optional one in another naming style (needsKernel,
/// NeedsKernel, needskernel, ...), which collage would not read. Any other misspelling
/// (needs_kernal) is to the compiler an unrelated member, as a helper would be, and is not found:
/// detected_traits<G>() lists what collage found, so that a
/// `static_assert(collage::detected_traits<MyIr>().needs_kernel);` beside the specialisation (or
/// a test comparing detected_traits<MyIr>().to_string()) catches it.
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

/// Which required members Traits has, each reported by its own static_assert in DataflowGraph.
/// Without a node_handle nothing else is looked at (so only that one is reported).
template <class G, class Traits, bool HasHandle = has_node_handle<Traits>::value>
struct required_members {
  static constexpr bool node_handle = false, usable_handle = true, roots = true, inputs = true;
};
template <class G, class Traits>
struct required_members<G, Traits, true> {
  using handle = typename Traits::node_handle;
  static constexpr bool node_handle = true;
  static constexpr bool usable_handle = is_hashable<handle>::value && is_equality_comparable<handle>::value;
  static constexpr bool roots = has_roots<G, Traits>::value;
  static constexpr bool inputs = has_inputs<G, Traits>::value;
};

template <class G, class Traits>
inline constexpr bool models_dataflow_traits_v =
    required_members<G, Traits>::node_handle && required_members<G, Traits>::usable_handle &&
    required_members<G, Traits>::roots && required_members<G, Traits>::inputs;

/// A class derived from T (when T can be derived from) and from `Base`, which declares one member:
/// naming that member in it is ambiguous exactly when T declares a member of the same name.
struct NoMembers {};
template <class T, class Base>
struct NameProbe : std::conditional_t<std::is_class_v<T> && !std::is_final_v<T>, T, NoMembers>, Base {};

// COLLAGE_DETAIL_DECLARES(name) defines declares_<name><T>: whether class T declares a member
// named `name` of any kind (a static or non-static function, an overload set, a template, a data
// member, a type), whatever its signature. It cannot see into a final class.
#define COLLAGE_DETAIL_DECLARES(name)                                                             \
  struct declares_##name##_base {                                                                 \
    int name;                                                                                     \
  };                                                                                              \
  template <class T, class = void>                                                                \
  struct declares_##name : std::true_type {};                                                     \
  template <class T>                                                                              \
  struct declares_##name<T, std::void_t<decltype(&NameProbe<T, declares_##name##_base>::name)>> \
      : std::false_type {};

// COLLAGE_DETAIL_OPTIONAL(name) defines declares_<name> and <name>_answer<G, Traits>::type: what
// Traits::name(const G&, const node_handle&) returns, or void when it cannot be called so.
#define COLLAGE_DETAIL_OPTIONAL(name)                                                                  \
  COLLAGE_DETAIL_DECLARES(name)                                                                        \
  template <class G, class Traits, class = void>                                                       \
  struct name##_answer {                                                                               \
    using type = void;                                                                                 \
  };                                                                                                   \
  template <class G, class Traits>                                                                     \
  struct name##_answer<G, Traits,                                                                      \
                       std::void_t<decltype(Traits::name(std::declval<const G&>(),                     \
                                                         std::declval<const typename Traits::node_handle&>()))>> { \
    using type =                                                                                       \
        decltype(Traits::name(std::declval<const G&>(), std::declval<const typename Traits::node_handle&>())); \
  };
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

// The optional members' names in the other common C++ naming styles (camelCase, PascalCase, run
// together), each with the signature of the member collage reads: a traits class written in its
// IR's own style, which collage would not read. DataflowGraph rejects each one it declares.
#define COLLAGE_DETAIL_OTHER_SPELLINGS(X)                                          \
  X(Kind, "static collage::OpKind kind(const G&, node_handle)")                   \
  X(opName, "static std::string op_name(const G&, node_handle)")                  \
  X(OpName, "static std::string op_name(const G&, node_handle)")                  \
  X(opname, "static std::string op_name(const G&, node_handle)")                  \
  X(Label, "static std::string label(const G&, node_handle)")                     \
  X(isInlinable, "static bool is_inlinable(const G&, node_handle)")               \
  X(IsInlinable, "static bool is_inlinable(const G&, node_handle)")               \
  X(isinlinable, "static bool is_inlinable(const G&, node_handle)")               \
  X(isTuple, "static bool is_tuple(const G&, node_handle)")                       \
  X(IsTuple, "static bool is_tuple(const G&, node_handle)")                       \
  X(istuple, "static bool is_tuple(const G&, node_handle)")                       \
  X(isProjection, "static bool is_projection(const G&, node_handle)")             \
  X(IsProjection, "static bool is_projection(const G&, node_handle)")             \
  X(isprojection, "static bool is_projection(const G&, node_handle)")             \
  X(projectionIndex, "static std::size_t projection_index(const G&, node_handle)") \
  X(ProjectionIndex, "static std::size_t projection_index(const G&, node_handle)") \
  X(projectionindex, "static std::size_t projection_index(const G&, node_handle)") \
  X(isConstant, "static bool is_constant(const G&, node_handle)")                 \
  X(IsConstant, "static bool is_constant(const G&, node_handle)")                 \
  X(isconstant, "static bool is_constant(const G&, node_handle)")                 \
  X(needsKernel, "static bool needs_kernel(const G&, node_handle)")               \
  X(NeedsKernel, "static bool needs_kernel(const G&, node_handle)")               \
  X(needskernel, "static bool needs_kernel(const G&, node_handle)")               \
  X(Scope, "static Scope scope(const G&, node_handle)")                           \
  X(Signature, "static std::string signature(const G&, node_handle)")
#define COLLAGE_DETAIL_DECLARES_SPELLING(spelling, signature) COLLAGE_DETAIL_DECLARES(spelling)
COLLAGE_DETAIL_OTHER_SPELLINGS(COLLAGE_DETAIL_DECLARES_SPELLING)
#undef COLLAGE_DETAIL_DECLARES_SPELLING
#undef COLLAGE_DETAIL_DECLARES

// What each optional member may return.
template <class R>
inline constexpr bool is_kind_answer_v = std::is_same_v<std::decay_t<R>, OpKind>;
template <class R>
inline constexpr bool is_text_answer_v = !std::is_void_v<R> && std::is_constructible_v<std::string, R>;
template <class R>
inline constexpr bool is_flag_answer_v = std::is_same_v<std::decay_t<R>, bool>;
template <class R>
inline constexpr bool is_index_answer_v =
    std::is_integral_v<std::decay_t<R>> && !std::is_same_v<std::decay_t<R>, bool>;
template <class R>
inline constexpr bool is_scope_answer_v =
    !std::is_void_v<R> && is_hashable<std::decay_t<R>>::value && is_equality_comparable<std::decay_t<R>>::value;

/// Stands in for the traits of a type that does not model them, so that the static_asserts in
/// DataflowGraph about what is missing are the only diagnostics.
template <class G>
struct placeholder_traits {
  using node_handle = int;
  static std::vector<int> roots(const G&) { return {}; }
  static std::vector<int> inputs(const G&, int) { return {}; }
};

/// Which optional members Traits has with a usable signature (callable as Traits::name(const G&,
/// const node_handle&), returning the right type), and which it declares otherwise (bad_<name>):
/// near misses, each reported by its own static_assert in DataflowGraph.
template <class G, class Traits>
struct optional_member_checks {
#define COLLAGE_DETAIL_MEMBER(name, answer_ok)                                      \
  static constexpr bool name = answer_ok<typename name##_answer<G, Traits>::type>; \
  static constexpr bool bad_##name = declares_##name<Traits>::value && !name;
  COLLAGE_DETAIL_MEMBER(kind, is_kind_answer_v)
  COLLAGE_DETAIL_MEMBER(op_name, is_text_answer_v)
  COLLAGE_DETAIL_MEMBER(label, is_text_answer_v)
  COLLAGE_DETAIL_MEMBER(is_inlinable, is_flag_answer_v)
  COLLAGE_DETAIL_MEMBER(is_tuple, is_flag_answer_v)
  COLLAGE_DETAIL_MEMBER(is_projection, is_flag_answer_v)
  COLLAGE_DETAIL_MEMBER(projection_index, is_index_answer_v)
  COLLAGE_DETAIL_MEMBER(is_constant, is_flag_answer_v)
  COLLAGE_DETAIL_MEMBER(needs_kernel, is_flag_answer_v)
  COLLAGE_DETAIL_MEMBER(scope, is_scope_answer_v)
  COLLAGE_DETAIL_MEMBER(signature, is_text_answer_v)
#undef COLLAGE_DETAIL_MEMBER
};
/// optional_member_checks of Traits, or (all false) of the placeholder when Traits has no
/// node_handle.
template <class G, class Traits>
using optional_members =
    optional_member_checks<G, std::conditional_t<has_node_handle<Traits>::value, Traits, placeholder_traits<G>>>;

/// Calls the optional members of Traits, or supplies their defaults.
template <class G, class Traits>
struct traits_access {
  using node_handle = typename Traits::node_handle;
  using found = optional_members<G, Traits>;

  static OpKind kind(const G& g, const node_handle& n) {
    if constexpr (found::kind) {
      return Traits::kind(g, n);
    } else {
      return OpKind::opaque;
    }
  }
  static std::string op_name(const G& g, const node_handle& n) {
    if constexpr (found::op_name) {
      return std::string(Traits::op_name(g, n));
    } else {
      return std::string();
    }
  }
  /// The traits' label, else the op name; may be empty (the graph then uses the index).
  static std::string label(const G& g, const node_handle& n) {
    if constexpr (found::label) {
      return std::string(Traits::label(g, n));
    } else {
      return op_name(g, n);
    }
  }
  static bool is_inlinable(const G& g, const node_handle& n) {
    if constexpr (found::is_inlinable) {
      return Traits::is_inlinable(g, n);
    } else {
      return false;
    }
  }
  static bool is_tuple(const G& g, const node_handle& n) {
    if constexpr (found::is_tuple) {
      return Traits::is_tuple(g, n);
    } else {
      return kind(g, n) == OpKind::tuple;
    }
  }
  static bool is_projection(const G& g, const node_handle& n) {
    if constexpr (found::is_projection) {
      return Traits::is_projection(g, n);
    } else {
      return false;
    }
  }
  static std::size_t projection_index(const G& g, const node_handle& n) {
    if constexpr (found::projection_index) {
      return static_cast<std::size_t>(Traits::projection_index(g, n));
    } else {
      return 0;
    }
  }
  static bool is_constant(const G& g, const node_handle& n) {
    if constexpr (found::is_constant) {
      return Traits::is_constant(g, n);
    } else {
      return false;
    }
  }
  static bool needs_kernel(const G& g, const node_handle& n) {
    if constexpr (found::needs_kernel) {
      return Traits::needs_kernel(g, n);
    } else {
      return !(is_inlinable(g, n) || is_tuple(g, n) || is_projection(g, n) || is_constant(g, n));
    }
  }
  /// What makes two nodes interchangeable for costing (see the file comment).
  static std::string signature(const G& g, const node_handle& n) {
    if constexpr (found::signature) {
      return std::string(Traits::signature(g, n));
    } else {
      return op_name(g, n) + "/" + std::string(to_string(kind(g, n)));
    }
  }
  static constexpr bool has_scopes = found::scope;
  /// Whether the traits define signature (else it is derived from the op name and kind).
  static constexpr bool has_own_signature = found::signature;
};

}  // namespace detail

/// True when dataflow_traits<G> provides node_handle (hashable, ==), roots and inputs.
template <class G>
inline constexpr bool is_dataflow_graph_v = detail::models_dataflow_traits_v<G, dataflow_traits<G>>;

/// Which optional members of dataflow_traits<G> collage found and uses; all false when G does not
/// model the traits. For a user's own tests: a misspelt member is not found, so
/// `static_assert(collage::detected_traits<MyIr>().needs_kernel);` beside the specialisation
/// catches any misspelling of it.
struct DetectedTraits {
  bool kind = false;
  bool op_name = false;
  bool label = false;
  bool is_inlinable = false;
  bool is_tuple = false;
  bool is_projection = false;
  bool projection_index = false;
  bool is_constant = false;
  bool needs_kernel = false;
  bool scope = false;
  bool signature = false;

  /// The found members' names in the order above, separated by ", " (e.g. "kind, op_name").
  std::string to_string() const {
    const std::pair<bool, const char*> members[] = {
        {kind, "kind"},
        {op_name, "op_name"},
        {label, "label"},
        {is_inlinable, "is_inlinable"},
        {is_tuple, "is_tuple"},
        {is_projection, "is_projection"},
        {projection_index, "projection_index"},
        {is_constant, "is_constant"},
        {needs_kernel, "needs_kernel"},
        {scope, "scope"},
        {signature, "signature"},
    };
    std::string out;
    for (const auto& [found, name] : members) {
      if (!found) continue;
      if (!out.empty()) out += ", ";
      out += name;
    }
    return out;
  }
};

/// The optional members of dataflow_traits<G> that collage found (see DetectedTraits).
template <class G>
constexpr DetectedTraits detected_traits() {
  using found = detail::optional_member_checks<
      G, std::conditional_t<is_dataflow_graph_v<G>, dataflow_traits<G>, detail::placeholder_traits<G>>>;
  return DetectedTraits{found::kind, found::op_name, found::label, found::is_inlinable,
                        found::is_tuple, found::is_projection, found::projection_index,
                        found::is_constant, found::needs_kernel, found::scope, found::signature};
}

#if defined(__cpp_concepts) && __cpp_concepts >= 201907L
/// C++20: the concept form of is_dataflow_graph_v, for constraining user templates.
template <class G>
concept dataflow_graph = is_dataflow_graph_v<G>;
#endif

}  // namespace collage
