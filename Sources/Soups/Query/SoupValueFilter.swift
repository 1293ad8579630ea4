import GRDB
import Synchronization

/// The values a soup holds at one column-indexed path, as a Bloom filter: "absent" is certain,
/// "maybe present" needs a lookup. Every write to the soup adds its entries' values (inside the
/// write transaction), so the filter stays a superset of the soup's values whichever stage writes;
/// a bulk load whose records are mostly new skips most of its match lookups.
///
/// Memory: 16 bits per value, 2 MB at least; rebuilt (for twice the values) when it fills up.
final class SoupValueFilter: Sendable {
    /// The soup table and column the filter was built from; a filter that no longer matches the
    /// soup's table (dropped, re-created, re-indexed) is discarded.
    let tableName: String
    let column: String
    let type: IndexType

    private struct State {
        var bits: [UInt64]
        var count = 0
        var mask: UInt64 { UInt64(bits.count * 64 - 1) }
    }
    private let state: Mutex<State>

    private static let bitsPerValue = 16
    private static let probes = 4
    /// The smallest filter, in bits (2 MB by default: a million values before the first rebuild).
    private let minimumBits: Int

    /// A filter of the values `table` holds at `path`, read from its column inside `db`'s current
    /// transaction; `nil` when the path has no index column (json1 indexes have none).
    init?(table: SoupTable, path: String, minimumBits: Int = 1 << 24, _ db: Database) throws {
        guard let offset = table.spec.indexes.firstIndex(where: { $0.path == path }), let column = table.columns[offset] else {
            return nil
        }
        tableName = table.tableName
        self.column = column
        type = table.spec.indexes[offset].type
        self.minimumBits = max(64, minimumBits)
        state = Mutex(try Self.scan(tableName: tableName, column: column, minimumBits: self.minimumBits, db))
    }

    /// `false` when no entry of the soup has `value` at the path.
    func mightContain(_ value: DatabaseValue) -> Bool {
        let (first, step) = Self.hashes(value)
        return state.withLock { state in
            var position = first
            for _ in 0..<Self.probes {
                let bit = position & state.mask
                if state.bits[Int(bit >> 6)] & (1 << (bit & 63)) == 0 { return false }
                position &+= step
            }
            return true
        }
    }

    /// The number of bits, for tests.
    var bitCount: Int { state.withLock { $0.bits.count * 64 } }

    /// Adds a value an entry now has; `true` when the filter is full and should be rebuilt.
    @discardableResult
    func insert(_ value: DatabaseValue) -> Bool {
        let (first, step) = Self.hashes(value)
        return state.withLock { state in
            Self.insert(first, step, into: &state)
            return state.count * Self.bitsPerValue > state.bits.count * 64
        }
    }

    /// Reads the column again into a filter sized for twice its values (when full).
    func rebuild(_ db: Database) throws {
        let fresh = try Self.scan(tableName: tableName, column: column, minimumBits: minimumBits, db)
        state.withLock { $0 = fresh }
    }

    /// Whether the filter still describes the column of `table` at `path`.
    func matches(_ table: SoupTable, path: String) -> Bool {
        guard let offset = table.spec.indexes.firstIndex(where: { $0.path == path }) else { return false }
        return table.tableName == tableName && table.columns[offset] == column && table.spec.indexes[offset].type == type
    }

    /// The column's values, streamed from a cursor (constant memory however large the soup).
    private static func scan(tableName: String, column: String, minimumBits: Int, _ db: Database) throws -> State {
        let count = try Int.fetchOne(db, sql: "SELECT COUNT(\(column)) FROM \(tableName)") ?? 0
        var bits = minimumBits
        while bits < count * 2 * bitsPerValue { bits <<= 1 }
        var state = State(bits: Array(repeating: 0, count: bits / 64))
        let values = try DatabaseValue.fetchCursor(db, sql: "SELECT \(column) FROM \(tableName) WHERE \(column) IS NOT NULL")
        while let value = try values.next() {
            let (first, step) = hashes(value)
            insert(first, step, into: &state)
        }
        return state
    }

    private static func insert(_ first: UInt64, _ step: UInt64, into state: inout State) {
        var position = first
        for _ in 0..<probes {
            let bit = position & state.mask
            state.bits[Int(bit >> 6)] |= 1 << (bit & 63)
            position &+= step
        }
        state.count += 1
    }

    /// Two hashes for double hashing; the step is odd so the probes differ.
    private static func hashes(_ value: DatabaseValue) -> (UInt64, UInt64) {
        var hasher = Hasher()
        hasher.combine(value)
        let hash = UInt64(bitPattern: Int64(hasher.finalize()))
        return (hash, (hash >> 32) | 1)
    }
}
