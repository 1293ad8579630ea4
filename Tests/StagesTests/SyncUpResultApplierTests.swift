import JSON
import Soups
import Testing

@testable import Stages

/// The result applier on its own: the org's answers to a page of trees turned into the entries'
/// new state with Mobile Sync's rules (and its weaknesses fixed), nothing marked clean unless the
/// org confirmed it.
struct SyncUpResultApplierTests {
    typealias Fixture = SyncUpPlannerTests
    static let parent = RecordKey(tree: 0, child: nil)
    static func child(_ position: Int) -> RecordKey { RecordKey(tree: 0, child: position) }

    /// Applies `outcomes` (with the kinds the writes had) to `trees`; the trees after, and what
    /// was removed and decided.
    static func apply(_ outcomes: [RecordKey: SyncUpOutcome], kinds: [RecordKey: SyncUpOperation.Kind], to trees: inout [SyncUpTree],
                      mergeMode: MergeMode = .overwrite, allowRerun: Bool = true)
        -> (result: SyncUpResultApplier.PassResult, removed: Set<RecordKey>, final: [RecordKey: SyncUpOutcome])
    {
        var removed = Set<RecordKey>()
        var final: [RecordKey: SyncUpOutcome] = [:]
        let result = SyncUpResultApplier(mergeMode: mergeMode).apply(outcomes, kinds: kinds, to: &trees, removed: &removed, final: &final,
                                                                     allowRerun: allowRerun)
        return (result, removed, final)
    }

    static func lastErrorCode(_ record: SyncUpRecord) -> String? { record.lastErrorCode }

    @Test func aCreatedParentsNewIdReachesEveryChildEvenOneThatFailed() {
        var trees = [Fixture.tree(Fixture.account(id: "local_1", created: true), [
            Fixture.contact(id: "local_2", entryId: 2, created: true, accountId: "local_1"),
            Fixture.contact(id: "local_3", entryId: 3, created: true, accountId: "local_1"),
        ])]
        let refused = SyncUpError(status: 400, code: "REQUIRED_FIELD_MISSING", message: "Required fields are missing: [LastName]", fields: ["LastName"])
        let (result, removed, final) = Self.apply(
            [Self.parent: .succeeded(id: "001000000000001AAA"), Self.child(0): .succeeded(id: "003000000000001AAA"), Self.child(1): .failed(refused)],
            kinds: [Self.parent: .create, Self.child(0): .create, Self.child(1): .create], to: &trees)
        #expect(result.rerun.isEmpty && removed.isEmpty && final.count == 3)
        #expect(trees[0].parent.id == "001000000000001AAA" && !trees[0].parent.isDirty)
        #expect(trees[0].children[0].id == "003000000000001AAA" && !trees[0].children[0].isDirty)
        #expect(trees[0].children.allSatisfy { $0.entry["AccountId"] == "001000000000001AAA" })
        // The refused child keeps its flags and the org's error.
        #expect(trees[0].children[1].isDirty && trees[0].children[1].isLocallyCreated)
        #expect(trees[0].children[1].lastErrorCode == "REQUIRED_FIELD_MISSING")
    }

    @Test func overwriteRecreatesAParentDeletedOnTheServerOnceWithItsChildren() {
        var trees = [Fixture.tree(Fixture.account(id: "001000000000001AAA", updated: true), [
            Fixture.contact(id: "003000000000002AAA", entryId: 2, accountId: "001000000000001AAA"),
        ])]
        let missing = SyncUpError(status: 404, code: "NOT_FOUND", message: "The requested resource does not exist")
        let first = Self.apply([Self.parent: .failed(missing)], kinds: [Self.parent: .update], to: &trees)
        #expect(first.result.rerun == [0])
        #expect(trees[0].parent.action == .create && trees[0].parent.id?.hasPrefix("local_") == true)
        // A master-detail child went with its parent on the server: it is created again too, linked anew.
        #expect(trees[0].children[0].action == .create)
        #expect(trees[0].children[0].entry["AccountId"] == trees[0].parent.entry["Id"])

        // Deleted again: not re-created twice.
        var again = [Fixture.tree(Fixture.account(id: "001000000000001AAA", updated: true), [])]
        let second = Self.apply([Self.parent: .failed(missing)], kinds: [Self.parent: .update], to: &again, allowRerun: false)
        #expect(second.result.rerun.isEmpty)
        guard case .failed(let error)? = second.final[Self.parent] else { Issue.record("\(second.final)"); return }
        #expect(error.code == "NOT_FOUND" && error.message.contains("not re-created twice"))
        #expect(again[0].parent.isDirty && again[0].parent.lastErrorCode == "NOT_FOUND")
    }

    @Test func leaveIfChangedLeavesARecordDeletedOnTheServerAsAConflict() {
        var trees = [Fixture.tree(Fixture.account(id: "001000000000001AAA", updated: true), [])]
        let missing = SyncUpError(status: 404, code: "NOT_FOUND", message: "gone")
        let (result, removed, final) = Self.apply([Self.parent: .failed(missing)], kinds: [Self.parent: .update], to: &trees,
                                                  mergeMode: .leaveIfChanged)
        #expect(result.rerun.isEmpty && removed.isEmpty)
        guard case .failed(let error)? = final[Self.parent] else { Issue.record("\(final)"); return }
        #expect(error.code == "CONFLICT")
        #expect(trees[0].parent.isDirty && trees[0].parent.isLocallyUpdated && trees[0].parent.lastErrorCode == "CONFLICT")
    }

    @Test func aDeletedParentTakesItsMasterDetailChildrenAndUnlinksLookupChildren() {
        var trees = [
            Fixture.tree(Fixture.account(id: "001000000000001AAA", deleted: true), [Fixture.contact(id: "003000000000002AAA", entryId: 2)]),
            Fixture.tree(Fixture.account(id: "001000000000003AAA", entryId: 3, deleted: true),
                         [Fixture.contact(id: "003000000000004AAA", entryId: 4, accountId: "001000000000003AAA")], .lookup),
        ]
        let lookupParent = RecordKey(tree: 1, child: nil)
        let (_, removed, final) = Self.apply(
            [Self.parent: .succeeded(id: nil), lookupParent: .failed(SyncUpError(status: 404, code: "ENTITY_IS_DELETED", message: "deleted"))],
            kinds: [Self.parent: .delete, lookupParent: .delete], to: &trees)
        // A delete the org had already done counts as done.
        #expect(removed == [Self.parent, Self.child(0), lookupParent])
        guard case .succeeded? = final[lookupParent] else { Issue.record("\(final)"); return }
        #expect(trees.allSatisfy { !$0.parent.isDirty && $0.parentRemoved })
        #expect(trees[1].children[0].entry["AccountId"] == .null)
    }

    @Test func aRefusedDeleteAndALostAnswerKeepTheirFlags() {
        var trees = [Fixture.tree(Fixture.account(id: "001000000000001AAA", deleted: true), []),
                     Fixture.tree(Fixture.account(id: "local_2", entryId: 2, created: true), [])]
        let other = RecordKey(tree: 1, child: nil)
        let locked = SyncUpError(status: 400, code: "UNABLE_TO_LOCK_ROW", message: "unable to obtain exclusive access to this record")
        let (_, removed, _) = Self.apply([Self.parent: .failed(locked), other: .uncertain("timed out")],
                                         kinds: [Self.parent: .delete, other: .create], to: &trees)
        #expect(removed.isEmpty)
        #expect(trees[0].parent.action == .delete && trees[0].parent.lastErrorCode == "UNABLE_TO_LOCK_ROW")
        #expect(trees[1].parent.action == .create && trees[1].parent.id == "local_2" && trees[1].parent.lastErrorCode == "UNCERTAIN")
    }
}
