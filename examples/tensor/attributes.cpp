#include "tensor/attributes.hpp"

#include <collage/support/numbers.hpp>

namespace tc {

std::int64_t Attributes::get_int(const std::string& name, std::int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (const auto* v = std::get_if<std::int64_t>(&it->second)) return *v;
  return fallback;
}

double Attributes::get_float(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (const auto* v = std::get_if<double>(&it->second)) return *v;
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
  return fallback;
}

std::vector<std::int64_t> Attributes::get_ints(const std::string& name, std::vector<std::int64_t> fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (const auto* v = std::get_if<std::vector<std::int64_t>>(&it->second)) return *v;
  return fallback;
}

std::string Attributes::to_string() const {
  std::string out;
  for (const auto& [name, value] : values_) {
    if (!out.empty()) out += ',';
    out += name + '=';
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      out += std::to_string(*i);
    } else if (const auto* f = std::get_if<double>(&value)) {
      out += collage::format_double(*f);
    } else {
      const auto& list = std::get<std::vector<std::int64_t>>(value);
      out += '[';
      for (std::size_t k = 0; k < list.size(); ++k) out += (k ? "," : "") + std::to_string(list[k]);
      out += ']';
    }
  }
  return out;
}

}  // namespace tc
