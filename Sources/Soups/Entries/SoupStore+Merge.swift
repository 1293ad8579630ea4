import GRDB
import JSON

extension SoupStore {
    /// Writes a merge's prepared entries (see ``SoupMerge``), preparing them again if the soup's
    /// indexes changed meanwhile; returns what it did.
    func merge(_ prepared: PreparedEntries, matching keyPath: String, _ db: Database) throws -> SoupMerge.Counts {
        let table = try SoupTable.load(db, soupName: prepared.soupName)
        guard let offset = table.spec.indexes.firstIndex(where: { $0.path == keyPath }), let column = table.columns[offset] else {
            throw SoupStoreError.notIndexed(soup: prepared.soupName, path: keyPath)
        }
        let entries = table.spec == prepared.table.spec
            ? prepared.entries : try prepared.entries.map { PreparedEntry(try $0.object(), table: table, confirming: true) }
        let filters = valueFilters(for: table)
        let writer = try EntryWriter(table: table, filters: filters, db: db)
        // The key's position among an entry's column values (after `_local` and `_syncId`), and
        // the filter that may tell at once that a key is new.
        let keyIndex = table.columnValueIndex(ofIndexAt: offset)
        let filter = filters.first { $0.valueIndex == keyIndex }?.filter
        var counts = SoupMerge.Counts()
        for entry in entries {
            let key = entry.columnValues[keyIndex + 2]
            let mayExist = !key.isNull && filter.map { $0.mightContain(key) } ?? true
            switch try writer.merge(entry, key: mayExist ? key : nil, column: column) {
            case .created: counts.created += 1
            case .updated: counts.updated += 1
            case .unchanged: counts.unchanged += 1
            }
        }
        try writer.finish()
        return counts
    }
}
