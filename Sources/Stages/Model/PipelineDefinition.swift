import JSON
import Soups

/// A loaded, validated pipeline file: where its store is, which soups and syncs it declares, how to
/// reach its org, and its stages. Paths are absolute.
public struct PipelineDefinition: Sendable {
    public var name: String
    /// The pipeline file, absolute.
    public var file: String
    /// The store's SQLite file, absolute.
    public var store: String
    public var org: OrgConfiguration?
    public var soups: [SoupSpec]
    public var syncs: [SyncDefinition]
    /// Stages in file order.
    public var stages: [StageDefinition]
    /// Non-fatal findings (unused keys in Mobile SDK files, repeated keys).
    public var warnings: [PipelineDiagnostic]
    /// Values that must never be printed (resolved secrets), for log redaction.
    public var secrets: [String]
    /// `"dryRun": true`: every run of the pipeline is a dry run, as with `--dry-run`.
    public var dryRun = false

    /// The stage with this id.
    public func stage(_ id: String) -> StageDefinition? {
        stages.first { $0.id == id }
    }

    /// The stages whose output is handed on in memory, never stored, each with the one stage
    /// reading it: a stage whose type ``Stage/streamsToSoleReader``, that no stage but its reader
    /// waits for (`from` or `after`), the reader reading nothing else. (Another stage waiting for
    /// it could hold the reader back while the stage waits for the reader: they would never end.)
    public var streamedOutputs: [String: String] {
        var dependents: [String: [StageDefinition]] = [:]
        for stage in stages {
            for id in stage.dependencies { dependents[id, default: []].append(stage) }
        }
        var streamed: [String: String] = [:]
        for stage in stages where type(of: stage.stage).streamsToSoleReader {
            if let only = dependents[stage.id], only.count == 1, only[0].from == [stage.id] { streamed[stage.id] = only[0].id }
        }
        return streamed
    }

    /// The stored datasets that one stage reads (`from`), with that stage: the run's feed hands
    /// their batches over to it, so it owns the records it is given.
    public var soleReaders: [String: String] {
        var readers: [String: [String]] = [:]
        for stage in stages {
            for id in stage.from { readers[id, default: []].append(stage.id) }
        }
        return readers.compactMapValues { $0.count == 1 ? $0[0] : nil }
    }
}

/// One entry of `stages`: its identity, edges and the stage type's own settings.
public struct StageDefinition: Sendable {
    public var id: String
    public var type: String
    /// Stages whose output datasets this stage reads.
    public var from: [String]
    /// Stages that must finish first, without passing data.
    public var after: [String]
    /// Every key other than `id`, `type`, `from` and `after`, variables resolved.
    public var settings: JSONObject
    /// The stage's JSON path in the pipeline file, e.g. `stages[3]`.
    public var path: String
    /// The stage as its type decoded it.
    public var stage: any Stage

    /// Every stage this one waits for.
    public var dependencies: [String] {
        var all = from
        for id in after where !all.contains(id) { all.append(id) }
        return all
    }
}
