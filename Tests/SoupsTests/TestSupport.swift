import Foundation
import JSON
import Testing

@testable import Soups

/// A fresh directory under the system temp directory, unique to one test.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("SoupsTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Runs `body` with a new store in its own temp directory, then closes the store and removes the directory.
func withStore<T>(_ body: (SoupStore, URL) async throws -> T) async throws -> T {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try SoupStore(path: directory.appendingPathComponent("store.sqlite").path)
    do {
        let result = try await body(store, directory)
        try? store.close()
        return result
    } catch {
        try? store.close()
        throw error
    }
}

func withStore<T>(_ body: (SoupStore) async throws -> T) async throws -> T {
    try await withStore { store, _ in try await body(store) }
}

/// The object of a JSON literal.
func entry(_ value: JSONValue) -> JSONObject {
    guard let object = value.objectValue else { fatalError("not an object: \(value)") }
    return object
}

/// A soup spec from `(path, type)` pairs.
func soup(_ name: String, _ indexes: (String, IndexType)...) -> SoupSpec {
    SoupSpec(name: name, indexes: indexes.map { IndexSpec(path: $0.0, type: $0.1) })
}

/// Every entry of a soup, in `_soupEntryId` order.
func allEntries(_ store: SoupStore, _ soupName: String) async throws -> [JSONObject] {
    try await store.query(QuerySpec(soupName: soupName, pageSize: 100_000))
}

/// The values of `path` in `entries`.
func values(_ entries: [JSONObject], _ path: String) -> [JSONValue?] {
    entries.map { JSONValue.object($0).value(atPath: path) }
}

/// The `_soupEntryId`s of `entries`.
func ids(_ entries: [JSONObject]) -> [Int64] {
    entries.map { $0.soupEntryId ?? -1 }
}

/// Epoch milliseconds now.
func nowMillis() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
