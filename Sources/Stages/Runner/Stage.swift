/// A step of a pipeline. Conform a type to `Stage` and register it in a ``StageRegistry`` to make
/// a new `type` available to pipeline files; the built-in stages are registered the same way.
///
/// A stage is decoded once, when the pipeline is loaded (so `pipeline validate` finds every
/// settings error without touching a store or an org), then run with a ``StageContext``.
public protocol Stage: Sendable {
    /// The `type` name pipeline files use, e.g. `extract.csv`.
    static var typeName: String { get }

    /// The count keys this stage reports, zeros included (see ``StageCounts``).
    static var countKeys: [String] { get }

    /// Whether the stage writes to the org (a sync up). A run with such a stage is checked
    /// against the production guard before any stage starts. Default `false`.
    static var writesToOrg: Bool { get }

    /// Whether the stage's output is cheap to work out again from its input (a `transform`). When
    /// exactly one stage reads it, and reads nothing else, the runner then hands the records to that
    /// stage in memory instead of storing them, and a `--only` run of the reader runs this stage
    /// too. Default `false`: the output is stored as a dataset.
    static var streamsToSoleReader: Bool { get }

    /// Reads the stage's settings. Report problems through `settings` (they are collected with the
    /// rest of the pipeline's); throw only when the stage cannot be described at all.
    init(settings: StageSettings) throws

    /// Runs the stage and returns what it did, record by record.
    func run(in context: StageContext) async throws -> StageResult
}

extension Stage {
    public static var writesToOrg: Bool { false }
    public static var streamsToSoleReader: Bool { false }
}

/// Names of the per-record outcome counts used in reports.
public enum StageCounts {
    public static let read = "read"
    public static let created = "created"
    public static let updated = "updated"
    public static let deleted = "deleted"
    public static let unchanged = "unchanged"
    public static let conflicts = "conflicts"
    public static let failed = "failed"
    public static let rejected = "rejected"
    /// Records a `transform`'s `where` passed over (not a problem: the pipeline asked for it).
    public static let filtered = "filtered"
    public static let uncertain = "uncertain"
    public static let ghostsRemoved = "ghostsRemoved"

    /// Counts that make a stage `partial` when non-zero.
    public static let problems = [conflicts, failed, rejected, uncertain]
    /// Counts that mean the stage changed soups or the org.
    public static let changes = [created, updated, deleted, ghostsRemoved]
}

/// What a stage did: counts per outcome and, for sync stages, per object.
public struct StageResult: Sendable, Equatable {
    public var counts: [String: Int]
    public var byObject: [String: [String: Int]]

    public init(counts: [String: Int] = [:], byObject: [String: [String: Int]] = [:]) {
        self.counts = counts
        self.byObject = byObject
    }

    /// Adds `amount` to a count, and to the object's count when `object` is given.
    public mutating func add(_ key: String, _ amount: Int = 1, object: String? = nil) {
        counts[key, default: 0] += amount
        if let object { byObject[object, default: [:]][key, default: 0] += amount }
    }

    /// Adds every count of `other`.
    public mutating func merge(_ other: StageResult) {
        for (key, amount) in other.counts { counts[key, default: 0] += amount }
        for (object, counts) in other.byObject {
            for (key, amount) in counts { byObject[object, default: [:]][key, default: 0] += amount }
        }
    }

    /// `true` when some records were rejected, failed, left on conflict or are uncertain.
    public var hasProblems: Bool { StageCounts.problems.contains { (counts[$0] ?? 0) > 0 } }

    /// `true` when the stage changed soups or the org.
    public var changedSomething: Bool { StageCounts.changes.contains { (counts[$0] ?? 0) > 0 } }
}

/// An error a stage throws to stop the run with a clear message.
public struct StageFailure: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// Bad input found before the stage changed anything (exit 2 when nothing else changed either).
        case invalidInput
        /// The stage failed (exit 1).
        case failed
    }

    public var kind: Kind
    public var message: String
    /// What the stage did before it failed (records it committed), reported as its counts.
    public var partialResult: StageResult?

    public init(_ kind: Kind, _ message: String, partialResult: StageResult? = nil) {
        self.kind = kind
        self.message = message
        self.partialResult = partialResult
    }

    public var description: String { message }
}
