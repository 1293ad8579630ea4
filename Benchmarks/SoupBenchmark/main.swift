// SoupBenchmark: how fast SoupStore.upsert writes entries, against the same rows written straight
// through the SQLite C API.
//
//   swift run -c release SoupBenchmark [--count N] [--batch N] [--repeat K] [--smoke]
//
// Both sides write into a fresh file under the temp directory: a soup with 3 string indexes through
// `SoupStore.upsert` (one call, so one transaction, per batch), and an equivalent bare table — same
// columns, same SQL indexes, same PRAGMAs (WAL, synchronous=NORMAL), one transaction per batch, one
// prepared INSERT reused — fed the very JSON text and index values the store writes, serialized
// before the clock starts. Only the inserts are timed; generating the entries is not. With
// `--repeat K` each side runs K times on fresh files and its best time counts (`--smoke`: 10,000
// entries, best of 5, since one 10,000-row batch is at the mercy of a single disk flush). The run
// fails (exit 1) when the store writes at less than half the bare rate (not with `--smoke`, which
// only proves the harness runs).

import CJemalloc
import Foundation
import GRDBSQLite
import JSON
import Soups

// jemalloc is linked (`import CJemalloc`) as in `pipeline`, so the figures are the product's.

struct Options {
    var count = 1_000_000
    var batchSize = 10_000
    var repeats = 1
    /// The store must reach this fraction of the bare rate.
    var minimumRatio = 0.5
    /// Whether a low ratio fails the run. `--smoke` (CI) only checks the harness end to end: a
    /// 10,000-row timing on a shared machine is no verdict, and tests carry no timing assertions.
    var enforceRatio = true

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        func number(after flag: String) -> Int {
            guard let text = iterator.next(), let value = Int(text.replacingOccurrences(of: "_", with: "")), value > 0 else {
                fail("\(flag) needs a positive whole number")
            }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--count": options.count = number(after: argument)
            case "--batch": options.batchSize = number(after: argument)
            case "--repeat": options.repeats = number(after: argument)
            case "--smoke":
                options.count = 10_000
                options.repeats = max(options.repeats, 5)
                options.enforceRatio = false
            case "-h", "--help":
                print("usage: SoupBenchmark [--count N (default 1000000)] [--batch N (default 10000)] [--repeat K (default 1)] [--smoke (10000 entries, best of 5)]")
                exit(0)
            default: fail("unknown argument \(argument); try --help")
            }
        }
        return options
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("SoupBenchmark: \(message)\n".utf8))
    exit(2)
}

/// A failed check or SQLite call; thrown (not exited on) so the temp files are still removed.
struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Data

let indexedPaths = ["Id", "Name", "Industry"]
let industries = ["Agriculture", "Banking", "Chemicals", "Education", "Energy", "Healthcare", "Media", "Retail", "Technology", "Utilities"]
let cities = ["Paris", "Oslo", "Lisbon", "Austin", "Osaka", "Lagos", "Lima", "Perth", "Quebec", "Turin", "Cork", "Delhi"]

/// Entry `i`: `attributes` plus six fields, as an Account synced down from an org would look.
func makeEntry(_ i: Int) -> JSONObject {
    var attributes = JSONObject()
    attributes["type"] = "Account"
    var entry = JSONObject()
    entry["attributes"] = .object(attributes)
    let digits = String(i, radix: 36, uppercase: true)
    entry["Id"] = .string("001" + String(repeating: "0", count: max(0, 12 - digits.count)) + digits + "AAA")
    entry["Name"] = .string("Account \(i)")
    entry["Industry"] = .string(industries[i % industries.count])
    entry["AnnualRevenue"] = .double(Double(i % 10_000) * 1_250.5)
    entry["NumberOfEmployees"] = .integer(Int64(i % 5_000))
    entry["BillingCity"] = .string(cities[i % cities.count])
    return entry
}

/// One row of the bare table, ready to bind.
struct BareRow {
    var id: Int64
    var soup: String
    var indexValues: [String]
}

/// The rows the store writes for entries `range`: the same JSON text (with `_soupEntryId` and
/// `_soupLastModifiedDate`, as the store adds them) and the same index column values.
func makeBareRows(_ range: Range<Int>, now: Int64) -> [BareRow] {
    range.map { i in
        var entry = makeEntry(i)
        let id = Int64(i + 1)
        entry["_soupEntryId"] = .integer(id)
        entry["_soupLastModifiedDate"] = .integer(now)
        return BareRow(id: id, soup: JSONValue.object(entry).jsonString, indexValues: indexedPaths.map { entry[$0]!.stringValue! })
    }
}

// MARK: - The store

func benchmarkStore(at path: String, options: Options) async throws -> Duration {
    let store = try SoupStore(path: path)
    defer { try? store.close() }
    try await store.registerSoup(SoupSpec(name: "Accounts", indexes: indexedPaths.map { IndexSpec(path: $0, type: .string) }))
    let clock = ContinuousClock()
    var elapsed = Duration.zero
    for start in stride(from: 0, to: options.count, by: options.batchSize) {
        let batch = (start..<min(start + options.batchSize, options.count)).map(makeEntry)
        let began = clock.now
        let stored = try await store.upsert(batch, into: "Accounts")
        elapsed += clock.now - began
        precondition(stored.count == batch.count)
    }
    let total = try await store.count(QuerySpec(soupName: "Accounts"))
    guard total == options.count else { throw BenchmarkError("the store holds \(total) entries, expected \(options.count)") }
    let probe = try await store.query(QuerySpec(soupName: "Accounts", kind: .exact(path: "Name", matchKey: "Account 7")))
    guard probe.count == 1, probe[0]["Id"] == makeEntry(7)["Id"] else { throw BenchmarkError("the store's Name index does not find entry 7") }
    return elapsed
}

// MARK: - Bare SQLite

nonisolated(unsafe) let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

final class BareDatabase {
    let handle: OpaquePointer

    init(path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            throw BenchmarkError("cannot open \(path)")
        }
        handle = db
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw BenchmarkError("SQLite: \(text) in \(sql)")
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchmarkError("SQLite: \(String(cString: sqlite3_errmsg(handle))) in \(sql)")
        }
        return statement
    }

    func check(_ code: Int32, _ what: String) throws {
        guard code == SQLITE_OK || code == SQLITE_DONE || code == SQLITE_ROW else {
            throw BenchmarkError("SQLite \(what): \(String(cString: sqlite3_errmsg(handle)))")
        }
    }
}

func benchmarkBare(at path: String, options: Options) throws -> Duration {
    let db = try BareDatabase(path: path)
    try db.execute("PRAGMA journal_mode = WAL")
    try db.execute("PRAGMA synchronous = NORMAL")
    // The soup table as SoupStore.registerSoup creates it.
    let columns = indexedPaths.indices.map { "TABLE_1_\($0)" }
    try db.execute("""
        CREATE TABLE TABLE_1 (id INTEGER PRIMARY KEY AUTOINCREMENT, soup TEXT NOT NULL, created INTEGER NOT NULL,
          lastModified INTEGER NOT NULL, _local INTEGER NOT NULL DEFAULT 0, _syncId INTEGER,
          \(columns.map { "\($0) TEXT" }.joined(separator: ", ")));
        CREATE INDEX TABLE_1_local ON TABLE_1 (_local, id);
        CREATE INDEX TABLE_1_syncId ON TABLE_1 (_syncId);
        CREATE INDEX TABLE_1_lastModified ON TABLE_1 (lastModified);
        \(columns.enumerated().map { "CREATE INDEX TABLE_1_\($0.offset)_idx ON TABLE_1 (\($0.element));" }.joined(separator: "\n"))
        """)
    let insert = try db.prepare("""
        INSERT INTO TABLE_1 (id, soup, created, lastModified, _local, _syncId, \(columns.joined(separator: ", ")))
        VALUES (?, ?, ?, ?, ?, ?, \(columns.map { _ in "?" }.joined(separator: ", ")))
        """)
    defer { sqlite3_finalize(insert) }
    let clock = ContinuousClock()
    var elapsed = Duration.zero
    for start in stride(from: 0, to: options.count, by: options.batchSize) {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let rows = makeBareRows(start..<min(start + options.batchSize, options.count), now: now)
        let began = clock.now
        try db.execute("BEGIN IMMEDIATE")
        for row in rows {
            sqlite3_bind_int64(insert, 1, row.id)
            sqlite3_bind_text(insert, 2, row.soup, -1, SQLITE_TRANSIENT)
            sqlite3_bind_int64(insert, 3, now)
            sqlite3_bind_int64(insert, 4, now)
            sqlite3_bind_int64(insert, 5, 0)
            sqlite3_bind_null(insert, 6)
            for (offset, value) in row.indexValues.enumerated() {
                sqlite3_bind_text(insert, Int32(7 + offset), value, -1, SQLITE_TRANSIENT)
            }
            try db.check(sqlite3_step(insert), "insert")
            sqlite3_reset(insert)
        }
        try db.execute("COMMIT")
        elapsed += clock.now - began
    }
    let count = try db.prepare("SELECT COUNT(*) FROM TABLE_1")
    defer { sqlite3_finalize(count) }
    try db.check(sqlite3_step(count), "count")
    let total = Int(sqlite3_column_int64(count, 0))
    guard total == options.count else { throw BenchmarkError("the bare table holds \(total) rows, expected \(options.count)") }
    return elapsed
}

// MARK: - Main

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// `value` with `decimals` fraction digits and thousands separated by commas.
func formatted(_ value: Double, decimals: Int = 0) -> String {
    let text = String(format: "%.\(decimals)f", value)
    let parts = text.split(separator: ".", maxSplits: 1)
    var integer = String(parts[0])
    let negative = integer.hasPrefix("-")
    if negative { integer.removeFirst() }
    var grouped = ""
    for (offset, character) in integer.enumerated() {
        if offset > 0 && (integer.count - offset) % 3 == 0 { grouped.append(",") }
        grouped.append(character)
    }
    return (negative ? "-" : "") + grouped + (parts.count > 1 ? "." + parts[1] : "")
}

func run() async throws -> Int32 {
    let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("SoupBenchmark-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    print("SoupBenchmark: \(formatted(Double(options.count))) entries, batches of \(formatted(Double(options.batchSize))), 3 string indexes"
          + (options.repeats > 1 ? ", best of \(options.repeats)" : ""))
    var storeTime = Duration.seconds(Int64.max)
    var bareTime = Duration.seconds(Int64.max)
    for round in 1...options.repeats {
        let storePath = directory.appendingPathComponent("store-\(round).sqlite").path
        let barePath = directory.appendingPathComponent("bare-\(round).sqlite").path
        storeTime = min(storeTime, try await benchmarkStore(at: storePath, options: options))
        bareTime = min(bareTime, try benchmarkBare(at: barePath, options: options))
        // Keep at most one round's files on disk.
        for path in [storePath, barePath] {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }

    let storeRate = Double(options.count) / seconds(storeTime)
    let bareRate = Double(options.count) / seconds(bareTime)
    let ratio = storeRate / bareRate
    print("  SoupStore.upsert  \(formatted(seconds(storeTime), decimals: 2)) s  \(formatted(storeRate)) entries/s")
    print("  bare SQLite C API \(formatted(seconds(bareTime), decimals: 2)) s  \(formatted(bareRate)) entries/s")
    print("  ratio store/bare  \(formatted(ratio, decimals: 2)) (required: at least \(formatted(options.minimumRatio, decimals: 2)))")
    if ratio < options.minimumRatio && options.enforceRatio {
        print("FAIL: the store writes at less than \(Int(options.minimumRatio * 100))% of the bare SQLite rate")
        return 1
    }
    print("OK")
    return 0
}

let status: Int32
do {
    status = try await run()
} catch {
    FileHandle.standardError.write(Data("SoupBenchmark: \(error)\n".utf8))
    status = 2
}
exit(status)
