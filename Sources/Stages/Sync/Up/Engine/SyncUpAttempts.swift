import Synchronization

/// The entries a sync up has taken in this run, by soup: a target made of passes
/// (``SyncUpTarget/passes(sharing:)``) offers each entry to one pass only, so a record that failed
/// is not sent again by a later round. In a dry run (`planning`), the `local_` ids of the records
/// planned so far count as resolved for the records that refer to them.
public final class SyncUpAttempts: Sendable {
    private struct State {
        var taken: [String: Set<Int64>] = [:]
        var planned: Set<String> = []
        /// Parent keys (``SyncUpRecordValidator/parentKey(_:)``) of records planned by upsert.
        var plannedKeys: Set<String> = []
        /// Fields left out of a create to break a cycle, by soup and entry: sent by a later update.
        var deferred: [String: [Int64: [String]]] = [:]
        var deferredSent: [String: Set<Int64>] = [:]
        /// How many entries had been taken when the last round began, and whether that round took none.
        var countAtRound = -1
        var idleRound = false
        var cycleBroken = false
    }

    private let state = Mutex(State())
    /// `true` in a dry run: nothing is created, so references to planned records are followed.
    public let planning: Bool

    public init(planning: Bool = false) {
        self.planning = planning
    }

    /// The ids of `ids` not taken yet, now taken.
    public func claim(_ ids: [Int64], in soup: String) -> [Int64] {
        state.withLock { state in ids.filter { state.taken[soup, default: []].insert($0).inserted } }
    }

    /// `true` once entry `id` of `soup` has been taken.
    public func isTaken(_ id: Int64, in soup: String) -> Bool {
        state.withLock { $0.taken[soup]?.contains(id) ?? false }
    }

    /// Records that the records holding these `local_` ids are planned (a dry run).
    public func plan(localIds: [String]) {
        state.withLock { $0.planned.formUnion(localIds) }
    }

    /// `true` when the record holding `localId` is planned in this dry run.
    public func isPlanned(_ localId: String) -> Bool {
        state.withLock { $0.planned.contains(localId) }
    }

    /// Records that a record holding this key is planned (a dry run's upsert by external id), so
    /// a record naming its parent by that key is not reported as pointing at nothing.
    func plan(parentKey: String) {
        state.withLock { _ = $0.plannedKeys.insert(parentKey) }
    }

    /// `true` when a record holding `parentKey` is planned in this dry run.
    func isPlanned(parentKey: String) -> Bool {
        state.withLock { $0.plannedKeys.contains(parentKey) }
    }

    /// Starts a round; `true` when the round before it took nothing (a graph then breaks a cycle).
    public func beginRound() -> Bool {
        state.withLock { state in
            let taken = state.taken.values.reduce(0) { $0 + $1.count }
            state.idleRound = state.countAtRound == taken
            state.countAtRound = taken
            state.cycleBroken = false
            return state.idleRound
        }
    }

    /// Claims the cycle break of this round (one object's records break it); `false` once taken.
    public func claimCycleBreak() -> Bool {
        state.withLock { state in
            defer { state.cycleBroken = true }
            return !state.cycleBroken
        }
    }

    /// Records that entry `id` of `soup` is created without `fields`, which a later update sends.
    public func deferFields(_ fields: [String], of id: Int64, in soup: String) {
        state.withLock { $0.deferred[soup, default: [:]][id] = fields }
    }

    /// Every deferral of `soup`: entry id → fields left out of its create.
    public func deferredFields(in soup: String) -> [Int64: [String]] {
        state.withLock { $0.deferred[soup] ?? [:] }
    }

    /// The deferred fields of `soup`'s entries whose update has not been claimed yet.
    public func pendingDeferrals(in soup: String) -> [Int64: [String]] {
        state.withLock { state in (state.deferred[soup] ?? [:]).filter { !(state.deferredSent[soup]?.contains($0.key) ?? false) } }
    }

    /// Claims the updates of deferred fields for `ids`.
    public func claimDeferred(_ ids: [Int64], in soup: String) -> [Int64] {
        state.withLock { state in ids.filter { state.deferredSent[soup, default: []].insert($0).inserted } }
    }

    /// How many entries have been taken.
    public var count: Int {
        state.withLock { $0.taken.values.reduce(0) { $0 + $1.count } + $0.deferredSent.values.reduce(0) { $0 + $1.count } }
    }
}
