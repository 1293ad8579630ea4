import Foundation
import Soups

/// Moves a named sync through Mobile Sync's states — RUNNING with progress, then DONE, FAILED or
/// STOPPED — saving each step in the store (so a dead run shows where it stopped) and reporting it
/// as a progress event.
public actor SyncStateTracker {
    public let store: SoupStore
    private let progress: ProgressReporter
    /// The sync as last saved.
    public private(set) var state: SyncState

    /// Loads the sync `name`; throws a clear error when the store has no sync of that name.
    public init(name: String, store: SoupStore, progress: ProgressReporter) async throws {
        self.store = store
        self.progress = progress
        do {
            state = try await store.syncs.state(named: name)
        } catch SoupStoreError.unknownSync {
            throw StageFailure(.invalidInput, "sync \"\(name)\" does not exist")
        }
    }

    /// Enters RUNNING with progress 0 and an unknown size (Mobile Sync's first update), keeping
    /// `maxTimeStamp`; returns the state the sync was in before.
    @discardableResult
    public func start() async throws -> SyncState {
        let previous = state
        state.transition(to: .running, at: Self.now)
        state.progress = 0
        state.totalSize = -1
        state.error = ""
        try await save()
        return previous
    }

    /// Records the total number of records (or trees) this run will handle.
    public func setTotalSize(_ totalSize: Int) async throws {
        state.totalSize = totalSize
        try await save()
    }

    /// Records that `done` of `totalSize` are handled: RUNNING at `done * 100 / totalSize`, as
    /// Mobile Sync reports it — not once all are done (``finish(_:error:)`` says DONE 100).
    public func advance(done: Int) async throws {
        guard state.totalSize > 0, done < state.totalSize else { return }
        state.progress = done * 100 / state.totalSize
        try await save()
    }

    /// Takes a state saved with a page's writes (``SoupChangeSet/syncState``) as the sync's own
    /// once they are committed, and reports its progress when that moved.
    public func committed(_ saved: SyncState) {
        let moved = (saved.status, saved.progress, saved.totalSize) != (state.status, state.progress, state.totalSize)
        state = saved
        if moved { progress.update(sync: state.name, status: state.status.rawValue, progress: state.progress, totalSize: state.totalSize) }
    }

    /// Stores a new `maxTimeStamp` (epoch milliseconds) when it is later than the stored one,
    /// without a progress report.
    public func raiseMaxTimeStamp(to milliseconds: Int64) async throws {
        guard milliseconds > state.maxTimeStamp else { return }
        state.maxTimeStamp = milliseconds
        try await store.syncs.save(state)
    }

    /// Replaces `maxTimeStamp` (e.g. to step back before a resume).
    public func setMaxTimeStamp(_ milliseconds: Int64) async throws {
        state.maxTimeStamp = milliseconds
        try await save()
    }

    /// Leaves RUNNING: DONE sets progress 100; FAILED and STOPPED keep the progress reached.
    public func finish(_ status: SyncState.Status, error: String = "") async throws {
        state.transition(to: status, at: Self.now)
        if status == .done {
            state.progress = 100
            if state.totalSize < 0 { state.totalSize = 0 }
        }
        state.error = error
        try await save()
    }

    private func save() async throws {
        try await store.syncs.save(state)
        progress.update(sync: state.name, status: state.status.rawValue, progress: state.progress, totalSize: state.totalSize)
    }

    private static var now: Int64 { Timestamp.milliseconds(Date()) }
}
