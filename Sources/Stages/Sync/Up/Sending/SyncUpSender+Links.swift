import Connectors
import JSON
import Soups

/// Links to parents created earlier in the sync, filled before a request leaves.
extension SyncUpSender {
    /// The request with each parent link filled; writes whose parent was not created are taken
    /// out with an error (`nil` request when none is left).
    func resolveLinks(_ request: SyncUpRequest, outcomes: [RecordKey: SyncUpOutcome]) -> (SyncUpRequest?, [RecordKey: SyncUpOutcome]) {
        var unsent: [RecordKey: SyncUpOutcome] = [:]
        func resolve(_ operations: [SyncUpOperation], referencing sameRequest: Set<RecordKey>,
                     reference: (RecordKey) -> String? = { "@{\($0.referenceId).id}" }) -> [SyncUpOperation] {
            var resolvedOperations: [SyncUpOperation] = []
            resolvedOperations.reserveCapacity(operations.count)
            for operation in operations {
                guard let link = operation.parentLink else {
                    resolvedOperations.append(operation)
                    continue
                }
                var resolved = operation
                if sameRequest.contains(link.parent), let expression = reference(link.parent) {
                    resolved.fields[link.field] = .string(expression)
                    resolved.journalLink = link.field
                } else if let id = outcomes[link.parent]?.acceptedId {
                    resolved.fields[link.field] = .string(id)
                } else if outcomes[link.parent]?.error == nil {
                    unsent[operation.key] = .unresolved("its parent's create is \(outcomes[link.parent]?.isUncertain == true ? "uncertain" : "not confirmed"); sent once the parent is settled")
                    continue
                } else {
                    let reason = outcomes[link.parent]?.error.map { "\($0.code): \($0.message)" } ?? "its outcome is unknown"
                    unsent[operation.key] = .failed(SyncUpError(
                        status: 424, code: "PARENT_NOT_SYNCED", message: "not sent: its parent was not created (\(reason))",
                        fields: [link.field]))
                    continue
                }
                resolved.parentLink = nil
                resolvedOperations.append(resolved)
            }
            return resolvedOperations
        }
        let resolved: SyncUpRequest?
        switch request {
        case .rest(let operation):
            resolved = resolve([operation], referencing: []).first.map(SyncUpRequest.rest)
        case .composite(let operations):
            let kept = resolve(operations, referencing: Set(operations.filter { $0.kind == .create || $0.kind == .upsert }.map(\.key)))
            resolved = kept.isEmpty ? nil : .composite(kept)
        case .collection(let call, let operations):
            let kept = resolve(operations, referencing: [])
            resolved = kept.isEmpty ? nil : .collection(call, kept)
        case .compositeCollections(let parts):
            // A new parent in an earlier call of this request: `@{c<call>[<position>].id}`.
            var positions: [RecordKey: String] = [:]
            for (index, part) in parts.enumerated() where part.parents {
                for (position, operation) in part.operations.enumerated() where operation.kind == .create || operation.kind == .upsert {
                    positions[operation.key] = "@{c\(index)[\(position)].id}"
                }
            }
            var kept = parts
            for index in kept.indices {
                kept[index].operations = resolve(kept[index].operations, referencing: Set(positions.keys), reference: { positions[$0] })
            }
            // Parents' calls keep their places (children's references count on them); empty children's calls go.
            kept = kept.filter { $0.parents || !$0.operations.isEmpty }
            resolved = kept.allSatisfy(\.operations.isEmpty) ? nil : .compositeCollections(kept)
        case .graph(let graphs):
            let kept = graphs.map { resolve($0, referencing: Set($0.filter { $0.kind == .create || $0.kind == .upsert }.map(\.key))) }
                .filter { !$0.isEmpty }
            resolved = kept.isEmpty ? nil : .graph(kept)
        case .bulk(let object, let kind, let field, let operations):
            let kept = resolve(operations, referencing: [])
            resolved = kept.isEmpty ? nil : .bulk(object: object, kind: kind, externalIdField: field, kept)
        }
        return (resolved, unsent)
    }
}
