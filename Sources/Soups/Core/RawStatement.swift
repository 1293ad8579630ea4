import GRDB
import GRDBSQLite

/// A prepared statement bound and stepped through SQLite's C API, for the bulk write path: GRDB's
/// `StatementArguments` costs an allocation and a conversion per value, which adds up over a
/// million rows. Used inside a GRDB transaction on the connection that prepared it; finalized
/// when released.
final class RawStatement {
    private let connection: OpaquePointer
    private let statement: OpaquePointer
    private let sql: String

    /// SQLite copies bound text before `bind` returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    init(_ db: Database, sql: String) throws {
        guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "closed database") }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
        }
        self.connection = connection
        self.statement = statement
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(statement)
    }

    /// Binds `value` to the 1-based parameter `index`.
    func bind(_ value: DatabaseValue, at index: Int32) {
        switch value.storage {
        case .null: sqlite3_bind_null(statement, index)
        case .int64(let number): sqlite3_bind_int64(statement, index, number)
        case .double(let number): sqlite3_bind_double(statement, index, number)
        case .string(let text): bind(text: text, at: index)
        case .blob(let data):
            data.withUnsafeBytes { bytes in
                _ = sqlite3_bind_blob(statement, index, bytes.baseAddress, Int32(bytes.count), Self.transient)
            }
        }
    }

    /// Binds an integer to the 1-based parameter `index`.
    func bind(_ number: Int64, at index: Int32) {
        sqlite3_bind_int64(statement, index, number)
    }

    /// Binds UTF-8 text to the 1-based parameter `index`.
    func bind(text bytes: [UInt8], at index: Int32) {
        bytes.withUnsafeBufferPointer { bindText($0, at: index) }
    }

    /// Binds a string to the 1-based parameter `index`.
    func bind(text: String, at index: Int32) {
        var text = text
        text.withUTF8 { bindText($0, at: index) }
    }

    /// Binds a string, or NULL, to the 1-based parameter `index`.
    func bind(optionalText text: String?, at index: Int32) {
        if let text { bind(text: text, at: index) } else { sqlite3_bind_null(statement, index) }
    }

    /// Binds an integer, or NULL, to the 1-based parameter `index`.
    func bind(optional number: Int64?, at index: Int32) {
        if let number { sqlite3_bind_int64(statement, index, number) } else { sqlite3_bind_null(statement, index) }
    }

    /// Binds text that SQLite copies (`inPlace` false) or reads where it is, which must then
    /// outlive every step until it is bound again.
    private func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32, inPlace: Bool = false) {
        // A non-null pointer even for empty text, so SQLite stores '' rather than NULL.
        let base = bytes.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(("" as StaticString).utf8Start)
        _ = sqlite3_bind_text(statement, index, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), inPlace ? nil : Self.transient)
    }

    /// Runs the statement as ``execute()`` does, with `text` (and `other`, when given) bound as
    /// UTF-8 text that SQLite reads in place for the step instead of copying it first (a stored
    /// entry's JSON, ~1 KB a row), and unbound after it.
    func execute(bindingText text: [UInt8], at index: Int32, and other: (text: [UInt8], index: Int32)? = nil) throws {
        try text.withUnsafeBufferPointer { buffer in
            bindText(buffer, at: index, inPlace: true)
            defer { sqlite3_bind_null(statement, index) }
            guard let other else { return try execute() }
            try other.text.withUnsafeBufferPointer { buffer in
                bindText(buffer, at: other.index, inPlace: true)
                defer { sqlite3_bind_null(statement, other.index) }
                try execute()
            }
        }
    }

    /// Runs the statement with `text` bound at `index` in place (it must stay valid for the call).
    func execute(bindingText text: UnsafeBufferPointer<UInt8>, at index: Int32) throws {
        bindText(text, at: index, inPlace: true)
        defer { sqlite3_bind_null(statement, index) }
        try execute()
    }

    /// Runs the statement to completion and resets it for the next bindings.
    func execute() throws {
        defer { sqlite3_reset(statement) }
        var code = sqlite3_step(statement)
        while code == SQLITE_ROW { code = sqlite3_step(statement) }
        guard code == SQLITE_DONE else { throw error(code) }
    }

    /// Rows the last completed INSERT, UPDATE or DELETE on this connection changed.
    var changes: Int { Int(sqlite3_changes(connection)) }

    /// Runs the statement and returns the first column of up to `limit` rows as integers.
    func fetchIntegers(limit: Int) throws -> [Int64] {
        defer { sqlite3_reset(statement) }
        var values: [Int64] = []
        while values.count < limit {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw error(code) }
            values.append(sqlite3_column_int64(statement, 0))
        }
        return values
    }

    /// A row being stepped over: its columns read in place (valid only during the call).
    struct Columns {
        fileprivate let statement: OpaquePointer

        func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }
        func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }
        func value(_ index: Int32) -> DatabaseValue { DatabaseValue(sqliteStatement: statement, index: index) }
        /// The column's UTF-8 text, in place: no row or string is built.
        func text(_ index: Int32) -> UnsafeBufferPointer<UInt8> {
            let text = sqlite3_column_text(statement, index)
            return UnsafeBufferPointer(start: text, count: text == nil ? 0 : Int(sqlite3_column_bytes(statement, index)))
        }
        /// The column's UTF-8 text, copied.
        func bytes(_ index: Int32) -> [UInt8] { Array(text(index)) }
        /// Whether the column holds `value` in its storage class (GRDB's `==` holds 1 and 1.0
        /// equal), read in place.
        func holds(_ value: DatabaseValue, at index: Int32) -> Bool {
            switch (value.storage, sqlite3_column_type(statement, index)) {
            case (.null, SQLITE_NULL): return true
            case (.int64(let number), SQLITE_INTEGER): return sqlite3_column_int64(statement, index) == number
            case (.double(let number), SQLITE_FLOAT): return sqlite3_column_double(statement, index).bitPattern == number.bitPattern
            case (.string(var string), SQLITE_TEXT): return string.withUTF8 { $0.elementsEqual(text(index)) }
            case (.blob(let data), SQLITE_BLOB):
                let count = Int(sqlite3_column_bytes(statement, index))
                guard count == data.count else { return false }
                guard count > 0, let blob = sqlite3_column_blob(statement, index) else { return true }
                return data.elementsEqual(UnsafeRawBufferPointer(start: blob, count: count))
            default: return false
            }
        }
    }

    /// Runs the statement and hands `body` each row's columns, without building GRDB rows.
    func forEachRow(_ body: (Columns) throws -> Void) throws {
        defer { sqlite3_reset(statement) }
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw error(code) }
            try body(Columns(statement: statement))
        }
    }

    private func error(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }
}
