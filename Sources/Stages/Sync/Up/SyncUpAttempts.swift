import Synchronization

/// The entries a sync up has taken in this run, by soup: a target made of passes
/// (``SyncUpTarget/passes(sharing:)``) offers each entry to one pass only, so a record that failed
/// is not sent again by a later round. In a dry run (`planning`), the `local_` ids of the records
/// planned so far count as resolved for the records that refer to them.
public final class SyncUpAttempts: Sendable {
    private struct State {
        var taken: [String: Set<Int64>] = [:]
        var planned: Set<String> = []
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

    /// How many entries have been taken.
    public var count: Int { state.withLock { $0.taken.values.reduce(0) { $0 + $1.count } } }
}
