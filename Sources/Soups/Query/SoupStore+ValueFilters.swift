import GRDB
import JSON

extension SoupStore {
    /// From now on, keeps an in-memory filter of the values `soupName` holds at `path` (which
    /// needs a `string`, `integer`, `floating` or `full_text` index), so that
    /// ``entries(in:where:in:)`` queries only the values that may be there. Every write to the
    /// soup through this `SoupStore` updates the filter; it lives as long as the `SoupStore`. Writes
    /// through another connection to the file are not seen: track values only where the store lock
    /// is held (a pipeline run). Does nothing for other paths.
    public func trackValues(in soupName: String, path: String) async throws {
        try await trackValues(in: soupName, path: path, minimumBits: 1 << 24)
    }

    /// ``trackValues(in:path:)`` with a filter of at least `minimumBits` (small ones, for tests).
    func trackValues(in soupName: String, path: String, minimumBits: Int) async throws {
        // Built inside a write transaction, so no write can fall between the scan and the filter.
        try await pool.write { db in
            let table = try SoupTable.load(db, soupName: soupName)
            if let existing = self.valueFilter(for: soupName, path: path), existing.matches(table, path: path) { return }
            guard let filter = try SoupValueFilter(table: table, path: path, minimumBits: minimumBits, db) else { return }
            self.valueFilters.withLock { $0[soupName, default: [:]][path] = filter }
        }
    }

    /// The filter of `soupName` at `path`, if one is tracked.
    func valueFilter(for soupName: String, path: String) -> SoupValueFilter? {
        valueFilters.withLock { $0[soupName]?[path] }
    }

    /// The filters a write to `table` must keep current, with the position of each one's value
    /// among a prepared entry's index values; filters that no longer match the soup are dropped.
    func valueFilters(for table: SoupTable) -> [(filter: SoupValueFilter, valueIndex: Int)] {
        valueFilters.withLock { filters in
            guard let tracked = filters[table.spec.name] else { return [] }
            var current: [(SoupValueFilter, Int)] = []
            for (path, filter) in tracked {
                guard filter.matches(table, path: path), let offset = table.spec.indexes.firstIndex(where: { $0.path == path }) else {
                    filters[table.spec.name]?[path] = nil
                    continue
                }
                current.append((filter, table.columnValueIndex(ofIndexAt: offset)))
            }
            return current
        }
    }
}
