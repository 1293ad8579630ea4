/// What `/emulator/stats` counts a request as (its `byKind` key), declared by the request's
/// route (docs/emulator.md).
enum RequestKind: String, Sendable, CaseIterable {
    case auth, versions, limits, query, search, tooling, bulk, composite, graph, tree, collections, describe, changes, sobject
}
