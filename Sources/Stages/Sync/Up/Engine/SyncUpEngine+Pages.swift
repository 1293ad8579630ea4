import Connectors
import Foundation
import JSON
import Logging
import Soups

/// A page synced alone, or cut into parts sent side by side when its requests would otherwise
/// wait on each other (the quickest cut weighed against what each part costs).
extension SyncUpEngine {
    /// The requests that start the parts after the first (at most ``overlapParts`` parts) for a
    /// phase of requests of `writes` writes each, such that the page ends soonest when saving a
    /// write costs the client what making it costs the org: the first part's writes, then for
    /// each next part the longer of its writes and the save of the part before, then the last
    /// part's save, and ``partCost`` for each part after the first. Of two cuts as quick, the one
    /// with fewer parts, then the one with the smaller last part: its save is waited for behind
    /// nothing. The model was made for parts that wait for each other, and is kept (not derived
    /// again) for parts that leave at once. A phase of more than ``cutPositions`` requests (a page
    /// of single-record requests) is cut only at that many evenly spaced requests and before its
    /// last, so the search stays bounded (about 40,000 cuts weighed, allocating only for a better one).
    static func quickestCut(writes: [Int]) -> [Int] {
        var upTo = [0]
        upTo.reserveCapacity(writes.count + 1)
        for count in writes { upTo.append(upTo[upTo.count - 1] + count) }
        let count = writes.count
        guard count > 1 else { return [] }
        let positions = count <= cutPositions ? Array(1..<count)
            : Array(Set((1..<cutPositions).map { $0 * count / cutPositions } + [count - 1])).sorted()
        func part(_ from: Int, _ to: Int) -> Int { upTo[to] - upTo[from] }
        // Cost, parts and last part's writes of the best cut so far; the page whole to begin with.
        var best = (cost: 2 * part(0, count), parts: 1, last: part(0, count))
        var bestCut: [Int] = []
        // A cut before `first`, then before `second` and `third` when given.
        func consider(_ first: Int, _ second: Int? = nil, _ third: Int? = nil) {
            var (cost, before, start, parts) = (part(0, first), part(0, first), first, 1)
            func partEnding(_ end: Int) {
                let writes = part(start, end)
                cost += max(writes, before) + Self.partCost
                (before, start, parts) = (writes, end, parts + 1)
            }
            if let second { partEnding(second) }
            if let third { partEnding(third) }
            partEnding(count)
            let candidate = (cost: cost + before, parts: parts, last: before)
            if candidate < best {
                best = candidate
                bestCut = [first] + [second, third].compactMap { $0 }
            }
        }
        for (i, first) in positions.enumerated() {
            consider(first)
            guard overlapParts > 2 else { continue }
            for (j, second) in positions[(i + 1)...].enumerated() {
                consider(first, second)
                guard overlapParts > 3 else { continue }
                for third in positions[(i + 1 + j + 1)...] { consider(first, second, third) }
            }
        }
        return bestCut
    }

    /// What a part after the first costs besides its writes, in writes: a save of its own, and
    /// where its new dates are read by a request of its own (LEAVE_IF_CHANGED but not through
    /// Collections), that read and the wait for the answer to the part before it. It keeps a page
    /// of a few records whole.
    static let partCost = 50

    /// The most requests ``quickestCut(writes:)`` weighs cutting before.
    static let cutPositions = 64

    /// Why a part of a page did not leave (``runInParts``): the run is being cancelled, or the
    /// writes of the part before it stopped.
    enum PartHeld: Error {
        case cancelled, stopped
    }

    /// One page's sync with a tally of its own, and how it ended (its committed work is in the
    /// tally even when it stopped with an error).
    struct PageRun: Sendable {
        var tally: Tally
        var outcome: PageOutcome?
        var error: (any Error)?
        var count: Int
    }

    func runPage(_ page: [Int64], heldBack: [String: Set<Int64>], transport: SyncUpTransport) async -> PageRun {
        var tally = Tally()
        do {
            var trees = try await target.trees(for: page, in: store)
            holdBack(&trees, heldBack, tally: &tally)
            let cuts = overlapCuts(trees, transport: transport)
            guard !cuts.isEmpty else {
                let outcome = try await syncPage(&trees, transport: transport, tally: &tally)
                return PageRun(tally: tally, outcome: outcome, count: page.count)
            }
            logger.debug("sync up \(settings.syncName): a page of \(trees.count) trees sent and saved in \(cuts.count + 1) parts, cut before trees \(cuts)")
            return await runInParts(trees, cutBefore: cuts, transport: transport, tally: tally, count: page.count)
        } catch {
            return PageRun(tally: tally, error: error, count: page.count)
        }
    }

    /// The most parts a page is cut into (``overlapCuts(_:transport:)``). Each part after the
    /// first costs a save of its own (and, where it reads its new dates in a request of its own,
    /// that read and a round trip's wait for the part before it). Four, with a small last part,
    /// ended the 1,000 × 5 journey as soon as three even ones to 8% sooner at 0 ms, and 2–4%
    /// sooner at 50 ms (medians of alternating runs, when every part waited for the one before).
    static let overlapParts = 4

    /// Where to cut a page so that the client saves each part while the org works on the next:
    /// the trees that start the requests splitting the page's first phase into up to
    /// ``overlapParts`` runs of requests (``quickestCut(writes:)``; each part then packs into
    /// exactly the requests it took in the whole page, so a cut costs no write request). About
    /// even, because saving a record costs the client about what creating it costs the org: a
    /// part's save is hidden only behind a next part as large; the last part's is not hidden at
    /// all, so of cuts as quick the one with the smallest last part is taken. None when the page
    /// fills fewer than two requests, in a dry run, or when the
    /// target carries new ids into other trees (a part must not be planned before another saves).
    func overlapCuts(_ trees: [SyncUpTree], transport: SyncUpTransport) -> [Int] {
        guard !settings.dryRun, transport != .bulk, target.treesAreIndependent, trees.count > 1 else { return [] }
        var planned = trees
        // Packing reads no write's fields: the cut is found without building any payload.
        let planner = SyncUpPlanner(payloads: false)
        let operations = planned.indices.map { planner.plan(&planned[$0], index: $0).operations }
        let readBack = SyncUpDateReads(fields: readsBack(transport) ? Self.dateFields(trees) : [:])
        guard let first = SyncUpPacker(transport: transport, readBack: readBack).phases(operations).first, first.count > 1 else { return [] }
        var cuts: [Int] = []
        for cutRequest in Self.quickestCut(writes: first.map(\.operations.count)) {
            let cut = first[cutRequest].operations.map(\.key.tree).min() ?? 0
            // A tree whose writes span the cut (its children packed after it) keeps the cut off.
            let before = first[..<cutRequest].flatMap { $0.operations.map(\.key.tree) }
            guard cut > (cuts.last ?? 0), before.allSatisfy({ $0 < cut }) else { continue }
            cuts.append(cut)
        }
        return cuts
    }

    /// A page synced in parts side by side (``overlapCuts(_:transport:)``): one LEAVE_IF_CHANGED
    /// check for the whole page, then each part sent, answered and saved on its own.
    func runInParts(_ trees: [SyncUpTree], cutBefore cuts: [Int], transport: SyncUpTransport, tally: Tally, count: Int) async -> PageRun {
        // The page's count less its trees (those held back), plus each part's that ran.
        var run = PageRun(tally: tally, count: count - trees.count)
        var outcome = PageOutcome()
        let conflicts: [Int64: SyncUpError]
        do {
            conflicts = SyncUpConflictChecker.byRoot(try await treesLeftAlone(trees), in: trees)
        } catch {
            run.error = error
            return run
        }
        // Parts whose requests read their new dates back (or that need none) leave at once,
        // together keeping at most `maxInFlight` requests in flight: the org answers them in turn
        // and the client saves each while the org works on the next. A part that reads its new
        // dates in a request of its own is planned at once but leaves only once the org has
        // answered the writes of the part before it (and that part's read is on its way, most
        // likely ahead of it): sent at once, its writes would come before the earlier part's
        // read (the org answers one request at a time). Such a part does not leave at all when
        // the writes of the one before it stopped (a spent API budget, a refused login) or the
        // run is being cancelled: as a page, nothing more is sent then. A part whose read of new
        // dates fails is not saved: the journal settles it next run.
        let atOnce = settings.mergeMode != .leaveIfChanged || readsBack(transport)
        let inFlight = atOnce ? SyncUpInFlight(maxInFlight: settings.maxInFlight, parts: cuts.count + 1) : nil
        let bounds = [0] + cuts + [trees.count]
        let signals = atOnce ? [] : cuts.map { _ in AsyncStream<Void>.makeStream() }
        @Sendable func sync(_ part: Int) async -> PageRun {
            var partTrees = Array(trees[bounds[part]..<bounds[part + 1]])
            var tally = Tally()
            let next = part < signals.count ? signals[part].continuation : nil
            let seat = inFlight?.part(part)
            defer {
                next?.finish()
                seat?.passTurn()
            }
            let (leave, answered) = Self.turns(of: part, signals)
            do {
                let outcome = try await syncPage(&partTrees, transport: transport, tally: &tally, conflictsBefore: conflicts,
                                                 beforeSending: leave, answered: answered, inFlight: seat)
                return PageRun(tally: tally, outcome: outcome, count: partTrees.count)
            } catch PartHeld.cancelled {
                // Cancelled with its trees unsent (a cancelled wait ends without the signal): the
                // page (and the sync) did not finish.
                return PageRun(tally: tally, error: CancellationError(), count: 0)
            } catch PartHeld.stopped {
                return PageRun(tally: tally, count: 0)
            } catch is SyncUpInFlight.Stopped {
                // Stopped by another part (its cause is set before any part can see the stop): the
                // page ends with that cause, whichever part is reported first.
                return PageRun(tally: tally, error: inFlight?.cause ?? CancellationError(), count: 0)
            } catch {
                return PageRun(tally: tally, error: error, count: partTrees.count)
            }
        }
        let parts = await withTaskGroup(of: PageRun.self) { group in
            for part in bounds.indices.dropLast() { group.addTask { await sync(part) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for part in parts {
            run.count += part.count
            run.tally.absorb(part.tally)
            if let error = part.error { run.error = run.error ?? error }
            if let done = part.outcome {
                outcome.settledRoots.formUnion(done.settledRoots)
                outcome.sawUncertain = outcome.sawUncertain || done.sawUncertain
            }
        }
        if run.error == nil { run.outcome = outcome }
        return run
    }

    /// A part's turn when parts leave in turn (`signals`, one a cut): it leaves once the part
    /// before it signals — held (``PartHeld``) when that part stopped without signalling or the
    /// run is cancelled — and signals the part after it once its own writes are answered.
    static func turns(of part: Int, _ signals: [(stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)])
        -> (leave: (@Sendable () async throws -> Void)?, answered: (@Sendable () -> Void)?) {
        var leave: (@Sendable () async throws -> Void)?
        if part > 0, !signals.isEmpty {
            let before = signals[part - 1].stream
            leave = {
                var leaves = false
                for await _ in before { leaves = true }
                guard !Task.isCancelled else { throw PartHeld.cancelled }
                guard leaves else { throw PartHeld.stopped }
            }
        }
        var answered: (@Sendable () -> Void)?
        if part < signals.count {
            let next = signals[part].continuation
            answered = {
                next.yield()
                next.finish()
            }
        }
        return (leave, answered)
    }
}
