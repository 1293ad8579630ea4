import Foundation

/// The figures the Markdown and HTML reports share, computed once from a ``RunReport`` and its
/// ``ReportDetails`` so the two never disagree.
struct ReportSummary {
    /// One stage's outcome for one object (a bar of the "by object" section).
    struct ObjectLine {
        var stage: String
        var object: String
        /// Outcome → records, in ``outcomeOrder``, zero outcomes left out.
        var outcomes: [(name: String, count: Int)]
        var total: Int { outcomes.reduce(0) { $0 + $1.count } }
    }

    let report: RunReport
    let details: ReportDetails
    let objectLines: [ObjectLine]
    /// The run's length in milliseconds (the end of its last stage).
    let runMs: Int
    /// Requests used and allowed per day, from the org's `Sforce-Limit-Info` (`api-usage=31/15000`).
    let limit: (used: Int, allowed: Int)?

    /// Outcomes in the order bars stack them: changes first, then the problems.
    static let outcomeOrder = [StageCounts.created, StageCounts.updated, StageCounts.deleted, StageCounts.ghostsRemoved,
                               StageCounts.unchanged, StageCounts.read, StageCounts.filtered, StageCounts.conflicts, StageCounts.failed,
                               StageCounts.rejected, StageCounts.uncertain]
    static let problems = Set(StageCounts.problems)

    init(report: RunReport, details: ReportDetails) {
        self.report = report
        self.details = details
        // What reached the org, when the run synced: extraction and staging figures are in the
        // stage table (and their rejects below it).
        let syncing = report.stages.filter(\.alwaysByObject)
        objectLines = (syncing.isEmpty ? report.stages : syncing).flatMap { stage in
            stage.byObject.keys.sorted().map { object in
                let counts = stage.byObject[object] ?? [:]
                let known = Self.outcomeOrder.filter { (counts[$0] ?? 0) > 0 }
                let others = counts.keys.filter { !Self.outcomeOrder.contains($0) && (counts[$0] ?? 0) > 0 }.sorted()
                return ObjectLine(stage: stage.id, object: object, outcomes: (known + others).map { ($0, counts[$0]!) })
            }
        }
        runMs = max(1, report.stages.map { $0.startedMs + $0.durationMs }.max() ?? 1)
        limit = report.api.limitInfo.flatMap { info in
            let usage = info.split(separator: ",").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("api-usage=") }
            let parts = usage?.split(separator: "=").last?.split(separator: "/").compactMap { Int($0) } ?? []
            return parts.count == 2 ? (parts[0], parts[1]) : nil
        }
    }

    /// Records each problem outcome counted across stages (`failed`: 2, …), zero ones left out.
    var problemTotals: [(name: String, count: Int)] {
        StageCounts.problems.compactMap { name in
            let total = report.stages.reduce(0) { $0 + ($1.counts[name] ?? 0) }
            return total > 0 ? (name, total) : nil
        }
    }

    /// `12.3 s`, `850 ms`, `2 min 5 s`.
    static func duration(_ milliseconds: Int) -> String {
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        if milliseconds < 60_000 { return String(format: "%.1f s", Double(milliseconds) / 1000) }
        return "\(milliseconds / 60_000) min \(milliseconds % 60_000 / 1000) s"
    }

    /// `1,234`.
    static func number(_ value: Int) -> String {
        (value < 0 ? "-" : "") + RunEvent.grouped(Int64(abs(value)))
    }

    /// The error file of an object, when the run wrote one.
    func errorFile(of object: String) -> String? {
        let name = "\(object)-error.csv"
        return details.files.contains(name) ? name : nil
    }
}
