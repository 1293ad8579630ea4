import Connectors
import Foundation
import Formats
import JSON

/// Writes a run's report files: `report.json` always, and `report.md`, `report.html` and
/// `stages.csv` when chosen. All formats are rendered from the same ``RunReport`` (and the files
/// the stages wrote beside it, ``ReportDetails``), so their counts agree.
public struct ReportWriter: Sendable {
    /// The formats a report stage may choose.
    public static let formats = ["json", "md", "html", "csv"]

    public var directory: String
    public var formats: [String]

    public init(directory: String, formats: [String]) {
        self.directory = directory
        self.formats = formats
    }

    /// Writes the files; returns their paths.
    @discardableResult
    public func write(_ report: RunReport) throws -> [String] {
        try PrivateFiles.createDirectory(directory)
        var written: [String] = []
        func save(_ name: String, _ text: String) throws {
            let path = (directory as NSString).appendingPathComponent(name)
            try PrivateFiles.write(Data(text.utf8), to: path)
            written.append(path)
        }
        var details = ReportDetails(directory: directory)
        let names = ["report.json"] + (formats.contains("md") ? ["report.md"] : []) + (formats.contains("html") ? ["report.html"] : [])
            + (formats.contains("csv") ? ["stages.csv"] : [])
        details.files = Set(details.files + names).sorted()
        let summary = ReportSummary(report: report, details: details)
        try save("report.json", report.json.prettyJSONString + "\n")
        if formats.contains("md") { try save("report.md", MarkdownReport(summary: summary).render()) }
        if formats.contains("html") { try save("report.html", HTMLReport(summary: summary).render()) }
        if formats.contains("csv") { try save("stages.csv", csv(report)) }
        return written
    }

    /// Every count key used by any stage, in a fixed order (created, updated, …).
    static func countColumns(_ report: RunReport) -> [String] {
        let order = [StageCounts.read, StageCounts.filtered, StageCounts.created, StageCounts.updated, StageCounts.deleted, StageCounts.unchanged,
                     StageCounts.conflicts, StageCounts.failed, StageCounts.rejected, StageCounts.uncertain, StageCounts.ghostsRemoved]
        let used = Set(report.stages.flatMap { $0.counts.keys })
        return order.filter(used.contains) + used.subtracting(order).sorted()
    }

    func csv(_ report: RunReport) -> String {
        let columns = Self.countColumns(report)
        var lines = [(["stage", "type", "status", "durationMs"] + columns + ["error"]).joined(separator: ",")]
        for stage in report.stages {
            let fields = [stage.id, stage.type, stage.status.rawValue, String(stage.durationMs)]
                + columns.map { stage.counts[$0].map(String.init) ?? "" } + [stage.error ?? ""]
            lines.append(CSVLine.encode(fields))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }
}
