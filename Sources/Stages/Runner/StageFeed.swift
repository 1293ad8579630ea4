import Soups

/// The datasets of a run's stages as they are written, so a stage reading another stage's output
/// (`from`) can run alongside it on the other core, a batch behind, instead of waiting for it to end.
actor StageFeed: DatasetFeed {
    private enum State {
        case running
        case finished
        case failed
    }

    private var states: [String: State] = [:]
    private var versions: [String: Int] = [:]
    private var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// The producer `name` began its dataset.
    func started(_ name: String) {
        states[name] = .running
        changed(name)
    }

    /// The producer `name` appended records.
    func appended(_ name: String) {
        changed(name)
    }

    /// The producer `name` ended; `failed` when its dataset is incomplete.
    func ended(_ name: String, failed: Bool) {
        states[name] = failed ? .failed : .finished
        changed(name)
    }

    /// Returns once the producer `name` has begun its dataset (or ended), or the caller is cancelled.
    func waitUntilStarted(_ name: String) async {
        while states[name] == nil && !Task.isCancelled {
            await withCheckedContinuation { waiters[name, default: []].append($0) }
        }
    }

    func version(of name: String) -> Int { versions[name] ?? 0 }

    func waitForMore(in name: String, after version: Int) async throws -> Bool {
        while true {
            if versions[name] ?? 0 != version { return true }
            switch states[name] {
            case nil, .finished?: return false
            case .failed?: throw StageFailure(.failed, "its input stage \"\(name)\" failed before it finished")
            case .running?: break
            }
            try Task.checkCancellation()
            await withCheckedContinuation { waiters[name, default: []].append($0) }
            try Task.checkCancellation()
            if versions[name] ?? 0 != version { return true }
        }
    }

    /// Wakes every stage waiting on `name` (also used when the run is stopping).
    func changed(_ name: String) {
        versions[name, default: 0] += 1
        for waiter in waiters.removeValue(forKey: name) ?? [] { waiter.resume() }
    }

    /// Wakes everyone, so cancelled readers see their cancellation.
    func wakeAll() {
        for name in Array(waiters.keys) { changed(name) }
    }
}
