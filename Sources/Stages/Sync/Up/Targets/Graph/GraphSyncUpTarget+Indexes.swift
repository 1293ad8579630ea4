import JSON
import Soups

extension GraphSyncUpTarget {
    /// `soups` with a string index on every graph reference field that has none: once a record
    /// is created, the entries holding its `local_` id are found through it. The product adds
    /// what it needs (the store adds an index to an existing soup when it opens it) rather than
    /// refusing a graph whose reference fields the author did not index.
    public static func indexingReferences(_ soups: [SoupSpec], for syncs: [SyncDefinition]) -> [SoupSpec] {
        var wanted: [String: [String]] = [:]
        for sync in syncs where sync.type == .syncUp && sync.target["type"]?.stringValue == "graph" {
            for object in sync.target["objects"]?.arrayValue ?? [] {
                guard let soup = object["soupName"]?.stringValue else { continue }
                for reference in object["references"]?.arrayValue ?? [] {
                    if let field = reference["field"]?.stringValue, !field.isEmpty { wanted[soup, default: []].append(field) }
                }
            }
        }
        guard !wanted.isEmpty else { return soups }
        return soups.map { spec in
            var spec = spec
            for field in wanted[spec.name] ?? [] where spec.index(forPath: field) == nil {
                spec.indexes.append(IndexSpec(path: field, type: .string))
            }
            return spec
        }
    }
}
