/// A problem found in a pipeline file or in a file it names, located by file and JSON path (or line).
///
/// Printed as `pipelines/x.json: stages[3].soup: no soup named "Foo"`.
public struct PipelineDiagnostic: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable {
        case error, warning
    }

    public var severity: Severity
    /// The file the problem is in, as given or resolved.
    public var file: String
    /// A JSON path such as `stages[3].soup`, or `line 12, column 4` for syntax errors; may be empty.
    public var location: String
    public var message: String

    public init(_ severity: Severity = .error, file: String, location: String, message: String) {
        self.severity = severity
        self.file = file
        self.location = location
        self.message = message
    }

    public var description: String {
        location.isEmpty ? "\(file): \(message)" : "\(file): \(location): \(message)"
    }
}

/// Every error found while loading a pipeline (warnings travel with the loaded pipeline instead).
public struct PipelineValidationError: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [PipelineDiagnostic]

    public init(_ diagnostics: [PipelineDiagnostic]) {
        self.diagnostics = diagnostics
    }

    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}
