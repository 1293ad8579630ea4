import JSON
import Soups

/// What a `stage` matches records to entries on: one indexed path, or several — a composite
/// natural key (`["LastName", "Birthdate", "MailingPostalCode"]`), all equal for a match.
struct MatchKey: Sendable, CustomStringConvertible {
    let paths: [String]

    init(_ paths: [String]) { self.paths = paths }

    /// A stage's `matchOn`: one path (default `Id`), or a list of paths.
    init(settings: StageSettings) {
        guard let value = settings.value("matchOn") else {
            self.init(["Id"])
            return
        }
        if let paths = Self.paths(value) {
            self.init(paths)
        } else {
            settings.report("matchOn", "must be an indexed path, or a list of distinct ones (a composite key: [\"LastName\", \"Birthdate\"])")
            self.init(["Id"])
        }
    }

    /// A path, or a non-empty list of distinct paths; `nil` otherwise.
    static func paths(_ value: JSONValue?) -> [String]? {
        if let path = value?.stringValue, !path.isEmpty { return [path] }
        guard let list = value?.arrayValue, !list.isEmpty else { return nil }
        let paths = list.compactMap(\.stringValue).filter { !$0.isEmpty }
        return paths.count == list.count && Set(paths).count == paths.count ? paths : nil
    }

    /// The one path, when the key has one.
    var single: String? { paths.count == 1 ? paths[0] : nil }

    /// The record's key: its value (a list of values for a composite key); `nil` when a value is
    /// absent, null or empty (the record then matches nothing).
    func value(of record: JSONObject) -> JSONValue? {
        if let single {
            guard let value = record[single], !SoupStagingStage.isEmpty(value) else { return nil }
            return value
        }
        var values: [JSONValue] = []
        values.reserveCapacity(paths.count)
        for path in paths {
            guard let value = record[path], !SoupStagingStage.isEmpty(value) else { return nil }
            values.append(value)
        }
        return .array(values)
    }

    /// The entries of `soupName` matching each key (as ``value(of:)`` gives them); with
    /// `keepingOnly`, an entry may come as its sync columns and that field only.
    func entries(in soupName: String, of keys: [JSONValue], store: SoupStore, keepingOnly field: String? = nil) async throws -> [JSONValue: [JSONObject]] {
        if let single, let field { return try await store.entries(in: soupName, where: single, in: keys, keepingOnly: field) }
        if let single { return try await store.entries(in: soupName, where: single, in: keys) }
        let found = try await store.entries(in: soupName, where: paths, in: keys.compactMap(\.arrayValue))
        return Dictionary(uniqueKeysWithValues: found.map { (JSONValue.array($0.key), $0.value) })
    }

    /// `Email`, or `LastName + Birthdate` for a composite key.
    var description: String { paths.joined(separator: " + ") }

    /// `Email = "a@b.c"`, or `LastName + Birthdate = ["Silva", "1990-04-01"]`.
    func describe(_ key: JSONValue) -> String { "\(description) = \(key.jsonString)" }
}
