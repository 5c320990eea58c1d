#pragma once

/// \file
/// FunctionRef: a non-owning reference to a callable (like llvm::function_ref), for the per-block
/// callbacks of the native kernels.

#include <memory>
#include <type_traits>
#include <utility>

namespace tc::native {

template <class Signature>
class FunctionRef;

/// A non-owning reference to a callable with signature R(Args...); the callable must outlive it.
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT: implicit, as a callable parameter
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace tc::native
