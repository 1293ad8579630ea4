import Foundation
import GRDB
import JSON

/// Where a soup lives in SQLite: its table, and the column of each indexed path.
///
/// Each soup is a table `TABLE_n(id, soup, created, lastModified, _local, _syncId, TABLE_n_0, …)`
/// as in SmartStore; `_local` and `_syncId` are always present so dirty-entry and ghost queries
/// work whether or not the app indexed `__local__` and `__sync_id__`.
struct SoupTable: Sendable {
    let spec: SoupSpec
    let tableName: String
    /// Column name per index position; `nil` for json1 indexes, which have no column.
    let columns: [String?]

    /// Whether the soup has `full_text` indexes (and so an FTS5 table).
    let hasFullText: Bool

    var ftsTableName: String { tableName + "_fts" }

    init(spec: SoupSpec, soupId: Int64) {
        self.spec = spec
        self.tableName = "TABLE_\(soupId)"
        self.hasFullText = spec.indexes.contains { $0.type == .fullText }
        self.columns = spec.indexes.enumerated().map { offset, index in
            index.type == .json1 ? nil : "TABLE_\(soupId)_\(offset)"
        }
    }

    /// The SQL expression for a path: the system columns, an index column, or `json_extract`.
    func expression(forPath path: String) -> String {
        switch path {
        case SyncField.soupEntryId: return "\(tableName).id"
        case SyncField.soupLastModifiedDate: return "\(tableName).lastModified"
        case SyncField.soupCreatedDate: return "\(tableName).created"
        case "_soup": return "\(tableName).soup"
        default:
            if let offset = spec.indexes.firstIndex(where: { $0.path == path }), let column = columns[offset] {
                return "\(tableName).\(column)"
            }
            return "json_extract(\(tableName).soup, '\(Self.jsonPath(path))')"
        }
    }

    /// The position of the index at `offset` among an entry's index column values (json1 indexes
    /// have none), which follow its `_local` and `_syncId`.
    func columnValueIndex(ofIndexAt offset: Int) -> Int {
        columns[..<offset].compactMap { $0 }.count
    }

    /// The index type of `path`, when it has one.
    func indexType(forPath path: String) -> IndexType? {
        spec.index(forPath: path)?.type
    }

    /// `$.a.b` for a dotted path, with quotes doubled for SQL.
    static func jsonPath(_ path: String) -> String {
        "$." + path.split(separator: ".").map { component in
            component.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } ? String(component) : "\"\(component)\""
        }.joined(separator: ".").replacingOccurrences(of: "'", with: "''")
    }

    /// Reads the table of `soupName`, or throws ``SoupStoreError/unknownSoup(_:)``.
    static func load(_ db: Database, soupName: String) throws -> SoupTable {
        guard let row = try Row.fetchOne(db, sql: "SELECT id, indexes FROM soup_attrs WHERE soupName = ?", arguments: [soupName]) else {
            throw SoupStoreError.unknownSoup(soupName)
        }
        let indexes = try JSONDecoder().decode([IndexSpec].self, from: Data((row["indexes"] as String).utf8))
        return SoupTable(spec: SoupSpec(name: soupName, indexes: indexes), soupId: row["id"])
    }

    /// The value stored in an index column for `value`, converted as SmartStore does for each type.
    static func columnValue(_ value: JSONValue?, type: IndexType) -> DatabaseValue {
        guard let value else { return .null }
        switch type {
        case .string, .fullText:
            switch value {
            case .string(let string): return string.databaseValue
            case .bool(let bool): return (bool ? "true" : "false").databaseValue
            case .integer(let number): return String(number).databaseValue
            case .double(let number): return "\(number)".databaseValue
            case .null: return .null
            case .array, .object: return value.jsonString.databaseValue
            }
        case .integer:
            switch value {
            case .integer(let number): return number.databaseValue
            case .double(let number): return Int64(exactly: number.rounded(.towardZero))?.databaseValue ?? .null
            case .bool(let bool): return (bool ? 1 : 0 as Int64).databaseValue
            case .string(let string):
                if let number = Int64(string) { return number.databaseValue }
                if string.lowercased() == "true" { return (1 as Int64).databaseValue }
                if string.lowercased() == "false" { return (0 as Int64).databaseValue }
                return .null
            default: return .null
            }
        case .floating:
            switch value {
            case .integer(let number): return Double(number).databaseValue
            case .double(let number): return number.databaseValue
            case .string(let string): return Double(string)?.databaseValue ?? .null
            case .bool(let bool): return (bool ? 1.0 : 0.0).databaseValue
            default: return .null
            }
        case .json1:
            return .null
        }
    }
}
