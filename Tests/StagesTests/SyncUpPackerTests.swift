import Connectors
import JSON
import Soups
import Testing

@testable import Stages

/// The sync-up packer on its own: a page's writes (as the planner gives them) packed into phases
/// of requests for each transport, within the org's limits, a child never in a phase before its
/// new parent's.
struct SyncUpPackerTests {
    /// The planned writes of `count` trees of a new parent and `children` new children each, and
    /// of `deletes` more trees whose parent (in the org) is deleted.
    static func trees(_ count: Int, children: Int, deletes: Int = 0) -> [[SyncUpOperation]] {
        let planner = SyncUpPlanner(payloads: false)
        var entryId: Int64 = 0
        func next() -> Int64 { entryId += 1; return entryId }
        var trees: [[SyncUpOperation]] = []
        for index in 0..<count {
            let parent = SyncUpPlannerTests.account(id: "local_p\(index)", entryId: next(), created: true)
            let kids = (0..<children).map { _ in SyncUpPlannerTests.contact(id: nil, entryId: next(), created: true) }
            var tree = SyncUpPlannerTests.tree(parent, kids)
            trees.append(planner.plan(&tree, index: index).operations)
        }
        for index in count..<(count + deletes) {
            var tree = SyncUpPlannerTests.tree(SyncUpPlannerTests.account(id: "001000000000\(index)AAA", entryId: next(), deleted: true), [])
            trees.append(planner.plan(&tree, index: index).operations)
        }
        return trees
    }

    /// Every write of every request of `phases`, phase by phase.
    static func writes(_ phases: [[SyncUpRequest]]) -> [[SyncUpOperation]] {
        phases.map { $0.flatMap(\.operations) }
    }

    /// No write is lost or packed twice, and no child is sent in a phase before its new parent's.
    static func expectComplete(_ phases: [[SyncUpRequest]], _ trees: [[SyncUpOperation]], sourceLocation: SourceLocation = #_sourceLocation) {
        let packed = writes(phases).flatMap { $0 }.map(\.key)
        #expect(packed.count == Set(packed).count, "a write packed twice", sourceLocation: sourceLocation)
        #expect(Set(packed) == Set(trees.joined().map(\.key)), sourceLocation: sourceLocation)
        var phaseOf: [RecordKey: Int] = [:]
        for (phase, operations) in writes(phases).enumerated() { for operation in operations { phaseOf[operation.key] = phase } }
        for operation in trees.joined() {
            guard let link = operation.parentLink, let parentPhase = phaseOf[link.parent], let own = phaseOf[operation.key] else { continue }
            #expect(parentPhase <= own, "\(operation.key) before its parent", sourceLocation: sourceLocation)
        }
    }

    @Test func restSendsParentsThenChildrenThenParentDeletes() {
        let trees = Self.trees(2, children: 2, deletes: 1)
        let phases = SyncUpPacker(transport: .rest).phases(trees)
        #expect(phases.map(\.count) == [2, 4, 1])
        #expect(Self.writes(phases).map { $0.map(\.kind) } == [[.create, .create], [.create, .create, .create, .create], [.delete]])
        #expect(phases.joined().allSatisfy { if case .rest = $0 { true } else { false } })
        Self.expectComplete(phases, trees)
    }

    @Test func collectionsPackWholeTreesFiveCallsARequestInOnePhase() {
        // 1,000 trees of 1 + 5: 6,000 writes in 7 Composite requests of Collections calls.
        let trees = Self.trees(1000, children: 5)
        let phases = SyncUpPacker(transport: .collections).phases(trees)
        #expect(phases.count == 1)
        #expect(phases[0].count == 7)
        for request in phases[0] {
            guard case .compositeCollections(let parts) = request else {
                Issue.record("not a Composite request of Collections calls: \(request)")
                continue
            }
            #expect(parts.count <= OrgLimits.heavySubrequests)
            #expect(parts.allSatisfy { $0.operations.count <= OrgLimits.collection })
            // Parents' calls first: a child refers only to calls before its own.
            let firstChild = parts.firstIndex { !$0.parents } ?? parts.count
            #expect(parts[firstChild...].allSatisfy { !$0.parents })
        }
        Self.expectComplete(phases, trees)
    }

    @Test func collectionsSendParentDeletesInAPhaseOfTheirOwn() {
        let trees = Self.trees(3, children: 1, deletes: 2)
        let phases = SyncUpPacker(transport: .collections).phases(trees)
        #expect(Self.writes(phases).map { $0.map(\.kind) } == [[.create, .create, .create, .create, .create, .create], [.delete, .delete]])
        Self.expectComplete(phases, trees)
    }

    @Test func compositeSplitsATreeOfMoreThan25WritesAcrossPhases() {
        let trees = Self.trees(1, children: 29) + Self.trees(2, children: 1).map { $0.map { Self.shifted($0, by: 10) } }
        let phases = SyncUpPacker(transport: .composite).phases(trees)
        // The big tree's first 25 writes and the two small trees cannot share one request.
        #expect(phases.count == 2)
        #expect(phases[0].map(\.operations.count) == [25, 4])
        #expect(phases[1].map(\.operations.count) == [5])
        #expect(phases.joined().allSatisfy { $0.operations.count <= OrgLimits.composite })
        Self.expectComplete(phases, trees)
    }

    @Test func perTreeSendsOneRequestATreeOneAtATime() {
        let trees = Self.trees(3, children: 2)
        let phases = SyncUpPacker(transport: .perTree).phases(trees)
        #expect(phases.map(\.count) == [1, 1, 1])
        #expect(phases.map { $0[0].operations.map(\.key.tree) } == [[0, 0, 0], [1, 1, 1], [2, 2, 2]])
        Self.expectComplete(phases, trees)
    }

    @Test func graphsFillRequestsUpTo75GraphsAndATooLargeTreeGoesThroughComposite() {
        let small = Self.trees(100, children: 1)
        let phases = SyncUpPacker(transport: .graph).phases(small)
        #expect(phases.count == 1)
        #expect(phases[0].map { if case .graph(let graphs) = $0 { graphs.count } else { -1 } } == [75, 25])
        Self.expectComplete(phases, small)

        let oversized = Self.trees(1, children: OrgLimits.graphNodes).map { $0.map { Self.shifted($0, by: 500) } }
        let mixed = SyncUpPacker(transport: .graph).phases(small + oversized)
        // The tree of 501 writes in Composite chunks (21 of them, the first in phase 0 beside the graphs).
        #expect(mixed.count == 21)
        #expect(mixed[0].filter { if case .graph = $0 { true } else { false } }.count == 2)
        Self.expectComplete(mixed, small + oversized)
    }

    @Test func bulkMakesAJobPerObjectAndOperation() {
        let trees = Self.trees(3, children: 2, deletes: 2)
        let phases = SyncUpPacker(transport: .bulk).phases(trees)
        let jobs = phases.map { $0.map { request -> String in
            guard case .bulk(let object, let kind, _, let operations) = request else { return "not bulk" }
            return "\(object) \(kind.rawValue) \(operations.count)"
        } }
        #expect(jobs == [["Account create 3"], ["Contact create 6"], ["Account delete 2"]])
        Self.expectComplete(phases, trees)
    }

    /// `operation` as if its tree were `offset` trees later (to put trees of two calls in one page).
    static func shifted(_ operation: SyncUpOperation, by offset: Int) -> SyncUpOperation {
        var shifted = operation
        shifted.key.tree += offset
        if let link = operation.parentLink { shifted.parentLink = (link.field, RecordKey(tree: link.parent.tree + offset, child: link.parent.child)) }
        return shifted
    }
}
