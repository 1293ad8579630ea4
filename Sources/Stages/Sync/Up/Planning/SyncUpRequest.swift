import Connectors

/// One request of a sync up, as packed by ``SyncUpPacker``.
enum SyncUpRequest: Sendable {
    /// The sObject Collections call a group of records goes through.
    enum CollectionCall: Sendable, Equatable {
        case create
        case update
        case upsert(type: String, field: String)
        case delete
    }

    /// One sObject Collections call of a ``compositeCollections`` request.
    struct CollectionPart: Sendable {
        var call: CollectionCall
        var objectType: String
        /// Parent records (`false`: children, which may refer to parents of earlier parts).
        var parents: Bool
        var operations: [SyncUpOperation]
    }

    case rest(SyncUpOperation)
    case composite([SyncUpOperation])
    case collection(CollectionCall, [SyncUpOperation])
    /// sObject Collections calls in one Composite request (5, less one an object when the request
    /// reads its records back), parents' calls first: a child whose new parent is in an earlier
    /// call is linked to it by `@{cN[i].id}`.
    case compositeCollections([CollectionPart])
    /// Graphs of one request: each tree's writes, all or nothing per graph.
    case graph([[SyncUpOperation]])
    case bulk(object: String, kind: SyncUpOperation.Kind, externalIdField: String?, [SyncUpOperation])

    /// Every write of the request.
    var operations: [SyncUpOperation] {
        switch self {
        case .rest(let operation): return [operation]
        case .composite(let operations), .collection(_, let operations), .bulk(_, _, _, let operations): return operations
        case .graph(let graphs): return Self.joined(graphs)
        case .compositeCollections(let parts): return Self.joined(parts.map(\.operations))
        }
    }

    /// `lists` one after the other, in one allocation (a page's requests are read many times).
    private static func joined(_ lists: [[SyncUpOperation]]) -> [SyncUpOperation] {
        var all: [SyncUpOperation] = []
        all.reserveCapacity(lists.reduce(0) { $0 + $1.count })
        for list in lists { all.append(contentsOf: list) }
        return all
    }

    /// `true` for a Bulk API job.
    var isBulk: Bool {
        if case .bulk = self { return true }
        return false
    }
}

/// Packs the writes of a page of trees into phases of requests: requests of one phase are
/// independent and may run concurrently; a phase starts when the one before has ended (so a
/// child sent in a later phase knows its new parent's id).
struct SyncUpPacker {
    var transport: SyncUpTransport
    /// The records each Composite request of Collections reads back: a subrequest is kept per
    /// object it reads (``SyncUpSender/readBack``).
    var readBack = SyncUpDateReads()

    /// The most graphs one Composite Graph request may hold.
    static let graphsPerRequest = 75

    func phases(_ trees: [[SyncUpOperation]]) -> [[SyncUpRequest]] {
        let phases: [[SyncUpRequest]]
        switch transport {
        case .rest: phases = staged(trees.joined()).map { $0.map(SyncUpRequest.rest) }
        case .collections: phases = compositeCollectionPhases(trees)
        case .bulk: phases = bulkPhases(trees.joined())
        case .composite: phases = compositePhases(trees)
        case .perTree: phases = trees.flatMap { compositeChunks($0).map { [SyncUpRequest.composite($0)] } }
        case .graph: phases = graphPhases(trees)
        }
        return phases.filter { !$0.isEmpty }
    }

    /// Bulk jobs' phases for writes of any trees, given one after another (no tree wrapped in
    /// an array of its own: a Bulk page holds 10,000 writes).
    func bulkPhases<Operations: Sequence<SyncUpOperation>>(_ operations: Operations) -> [[SyncUpRequest]] {
        staged(operations).map(bulkRequests).filter { !$0.isEmpty }
    }

    /// Parent creates and updates, then children, then parent deletes.
    private func staged<Operations: Sequence<SyncUpOperation>>(_ operations: Operations) -> [[SyncUpOperation]] {
        var stages: [[SyncUpOperation]] = [[], [], []]
        // Room for all in the first (most often all creates and updates of parents): a Bulk page's
        // 10,000 writes grown a doubling at a time are copied, and their memory faulted in, anew.
        stages[0].reserveCapacity(operations.underestimatedCount)
        for operation in operations {
            if operation.key.child != nil {
                stages[1].append(operation)
            } else {
                stages[operation.kind == .delete ? 2 : 0].append(operation)
            }
        }
        return stages
    }

    static func collectionCall(_ operation: SyncUpOperation) -> SyncUpRequest.CollectionCall {
        switch operation.kind {
        case .create: return .create
        case .update: return .update
        case .upsert: return .upsert(type: operation.objectType, field: operation.externalIdField ?? "")
        case .delete: return .delete
        }
    }

    /// sObject Collections calls packed 5 to a Composite request: each tree whole in one request
    /// (parents' calls first, children referring to their new parent in it), so trees need one
    /// phase; then the children of trees too large for one request (by their parent's id), then
    /// parent deletes. 1,000 trees of 1 + 5 new records take 7 requests (13 for updates, which
    /// LEAVE_IF_CHANGED reads back: 80 trees a request).
    private func compositeCollectionPhases(_ trees: [[SyncUpOperation]]) -> [[SyncUpRequest]] {
        let empty = CollectionPacking(readBack: readBack)
        var main = empty
        var later: [SyncUpOperation] = []
        var deletes: [SyncUpOperation] = []
        for tree in trees {
            var together = tree.filter { !($0.key.child == nil && $0.kind == .delete) }
            deletes += tree.filter { $0.key.child == nil && $0.kind == .delete }
            if !main.fits(together) && !empty.fits(together) {
                // Too many children for one request: they follow once the parent's id is known.
                later += together.filter { $0.key.child != nil }
                together = together.filter { $0.key.child == nil }
            }
            if !main.fits(together) { main.flush() }
            main.add(together)
        }
        main.flush()
        var phases = [main.requests]
        for operations in [later, deletes] {
            var packing = empty
            for operation in operations {
                if !packing.fits([operation]) { packing.flush() }
                packing.add([operation])
            }
            packing.flush()
            phases.append(packing.requests)
        }
        return phases
    }

    /// Collections calls being filled into Composite requests.
    private struct CollectionPacking {
        /// One subrequest per object read back is kept for its read (``SyncUpPacker/readBack``).
        var readBack: SyncUpDateReads
        var parts: [SyncUpRequest.CollectionPart] = []
        var requests: [SyncUpRequest] = []

        /// What a call holds: one kind of call, for one object, of parents or of children.
        private struct Kind: Equatable {
            var call: SyncUpRequest.CollectionCall
            var objectType: String
            var parents: Bool

            init(_ operation: SyncUpOperation) {
                call = SyncUpPacker.collectionCall(operation)
                objectType = operation.objectType
                parents = operation.key.child == nil
            }

            init(_ part: SyncUpRequest.CollectionPart) {
                call = part.call
                objectType = part.objectType
                parents = part.parents
            }
        }

        /// Whether `operations` fit in the request being filled: counted, not placed (placing a
        /// trial copy would copy the calls' operations for every tree tried).
        func fits(_ operations: [SyncUpOperation]) -> Bool {
            var calls = parts.map { (kind: Kind($0), count: $0.operations.count) }
            for operation in operations {
                let kind = Kind(operation)
                if let index = calls.firstIndex(where: { $0.kind == kind && $0.count < OrgLimits.collection }) {
                    calls[index].count += 1
                } else {
                    calls.append((kind, 1))
                }
            }
            let read = readBack.fields(after: calls.map { ($0.kind.call, $0.kind.objectType, $0.kind.parents) })
            let reads = Set(zip(calls, read).lazy.filter { $1 != nil }.map(\.0.kind.objectType)).count
            return calls.count + reads <= OrgLimits.heavySubrequests
        }

        /// Places `operations`, each in an open call of its kind with room, or a new one.
        mutating func add(_ operations: [SyncUpOperation]) {
            for operation in operations {
                let kind = Kind(operation)
                if let index = parts.firstIndex(where: { Kind($0) == kind && $0.operations.count < OrgLimits.collection }) {
                    parts[index].operations.append(operation)
                } else {
                    // A call fills up to the limit: its room taken once.
                    var first = [operation]
                    first.reserveCapacity(OrgLimits.collection)
                    parts.append(SyncUpRequest.CollectionPart(call: kind.call, objectType: kind.objectType, parents: kind.parents,
                                                              operations: first))
                }
            }
        }

        mutating func flush() {
            guard !parts.isEmpty else { return }
            // Parents' calls first: a child refers only to calls before its own.
            requests.append(.compositeCollections(parts.filter(\.parents) + parts.filter { !$0.parents }))
            parts = []
        }
    }

    private func bulkRequests(_ operations: [SyncUpOperation]) -> [SyncUpRequest] {
        // Most often one object and operation: the writes as they are, not copied one by one.
        if let first = operations.first, operations.allSatisfy({
            $0.objectType == first.objectType && $0.kind == first.kind && $0.externalIdField == first.externalIdField
        }) {
            return [.bulk(object: first.objectType, kind: first.kind, externalIdField: first.externalIdField, operations)]
        }
        var groups: [(object: String, kind: SyncUpOperation.Kind, field: String?, operations: [SyncUpOperation])] = []
        for operation in operations {
            if let index = groups.firstIndex(where: {
                $0.object == operation.objectType && $0.kind == operation.kind && $0.field == operation.externalIdField
            }) {
                groups[index].operations.append(operation)
            } else {
                groups.append((operation.objectType, operation.kind, operation.externalIdField, [operation]))
            }
        }
        return groups.map { SyncUpRequest.bulk(object: $0.object, kind: $0.kind, externalIdField: $0.field, $0.operations) }
    }

    /// A tree's writes in chunks of at most 25 subrequests; the parent's create is in the first.
    private func compositeChunks(_ operations: [SyncUpOperation]) -> [[SyncUpOperation]] {
        operations.chunked(into: OrgLimits.composite)
    }

    /// Chunk `i` of every tree goes to phase `i`; chunks of one phase share requests, a chunk
    /// never split.
    private func compositePhases(_ trees: [[SyncUpOperation]]) -> [[SyncUpRequest]] {
        var phases: [[SyncUpRequest]] = []
        var pending: [[SyncUpOperation]] = []
        for tree in trees {
            for (phase, chunk) in compositeChunks(tree).enumerated() {
                while phases.count <= phase { phases.append([]); pending.append([]) }
                if pending[phase].count + chunk.count > OrgLimits.composite {
                    phases[phase].append(.composite(pending[phase]))
                    pending[phase] = []
                }
                pending[phase].append(contentsOf: chunk)
            }
        }
        for phase in pending.indices where !pending[phase].isEmpty { phases[phase].append(.composite(pending[phase])) }
        return phases
    }

    /// One graph per tree, packed up to 500 nodes and 75 graphs a request; a tree of more than
    /// 500 writes goes through Composite instead, in the phases after.
    private func graphPhases(_ trees: [[SyncUpOperation]]) -> [[SyncUpRequest]] {
        var requests: [SyncUpRequest] = []
        var pending: [[SyncUpOperation]] = []
        var nodes = 0
        var oversized: [[SyncUpOperation]] = []
        for tree in trees where !tree.isEmpty {
            guard tree.count <= OrgLimits.graphNodes else { oversized.append(tree); continue }
            if nodes + tree.count > OrgLimits.graphNodes || pending.count == Self.graphsPerRequest {
                requests.append(.graph(pending))
                pending = []
                nodes = 0
            }
            pending.append(tree)
            nodes += tree.count
        }
        if !pending.isEmpty { requests.append(.graph(pending)) }
        var phases = compositePhases(oversized)
        if phases.isEmpty { phases = [requests] } else { phases[0].append(contentsOf: requests) }
        return phases
    }
}
