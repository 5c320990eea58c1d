#pragma once

/// \file
/// MeasurementStore: where a PersistentOracle keeps measurements, by oracle identity and
/// structural key. MeasurementDb (a plain-text file) is one; a user can back it with a real
/// database (the example compiler uses SQLite, for several processes tuning at once).

#include <optional>
#include <string>
#include <string_view>

#include "collage/cost/cost_oracle.hpp"

namespace collage {

/// A map from (oracle identity, key) to Measurement. A store that can fail (a database on disk)
/// answers a failed lookup as absent and keeps its own account of failed writes: a measurement
/// that is not kept is only asked again later, never a wrong answer.
class MeasurementStore {
 public:
  virtual ~MeasurementStore() = default;
  /// The measurement stored under `identity` and `key`, if any.
  virtual std::optional<Measurement> find(std::string_view identity, std::string_view key) const = 0;
  /// Stores `m` under `identity` and `key`, replacing what was there.
  virtual void put(std::string_view identity, std::string key, Measurement m) = 0;

 protected:
  MeasurementStore() = default;
  MeasurementStore(const MeasurementStore&) = default;
  MeasurementStore& operator=(const MeasurementStore&) = default;
  MeasurementStore(MeasurementStore&&) = default;
  MeasurementStore& operator=(MeasurementStore&&) = default;
};

}  // namespace collage
