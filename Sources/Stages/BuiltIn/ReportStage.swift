/// `report`: chooses where the run's report goes and in which formats. The report itself is
/// written when the run ends — failed runs included — whatever this stage's position.
public struct ReportStage: Stage {
    public static let typeName = "report"
    public static let countKeys: [String] = []

    /// The report directory, absolute; `nil` for the default beside the store.
    public let directory: String?
    /// The chosen formats; `json` is always written.
    public let formats: [String]

    public init(settings: StageSettings) throws {
        directory = settings.filePath("dir")
        var formats: [String] = []
        for (offset, format) in (settings.strings("formats") ?? ["json"]).enumerated() {
            if ReportWriter.formats.contains(format) {
                formats.append(format)
            } else {
                settings.report("formats[\(offset)]", "unknown report format \"\(format)\"; expected json, md, html or csv")
            }
        }
        self.formats = formats
    }

    public func run(in context: StageContext) async throws -> StageResult {
        StageResult()
    }
}
