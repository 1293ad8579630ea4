import ArgumentParser
import Foundation
import Stages

/// `--var` and `--var-file`, shared by the commands that load a pipeline.
struct VariableOptions: ParsableArguments {
    @Option(name: .customLong("var"), help: ArgumentHelp("Set a variable for ${KEY} in the pipeline file (overrides the environment).", valueName: "KEY=VALUE"))
    var variables: [String] = []

    @Option(name: .customLong("var-file"), help: ArgumentHelp("Read KEY=VALUE lines (for secrets: nothing on the command line).", valueName: "FILE"))
    var variableFile: String?

    /// The environment, overridden by the variable file, overridden by `--var`.
    func resolver() throws -> VariableResolver {
        var values = ProcessInfo.processInfo.environment
        if let variableFile {
            guard let text = try? String(contentsOfFile: variableFile, encoding: .utf8) else {
                throw CLIError(exitCode: 2, message: "\(variableFile): cannot read the variable file")
            }
            for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
                if line.isEmpty || line.hasPrefix("#") { continue }
                guard let equals = line.firstIndex(of: "="), equals != line.startIndex else {
                    throw CLIError(exitCode: 2, message: "\(variableFile): line \(offset + 1): expected KEY=VALUE")
                }
                let key = line[..<equals].trimmingCharacters(in: .whitespaces)
                var value = String(line[line.index(after: equals)...])
                if value.count >= 2, let first = value.first, first == value.last, first == "\"" || first == "'" {
                    value = String(value.dropFirst().dropLast())
                }
                values[key.hasPrefix("export ") ? String(key.dropFirst(7)).trimmingCharacters(in: .whitespaces) : key] = value
            }
        }
        for assignment in variables {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw CLIError(exitCode: 2, message: "--var \(assignment.split(separator: "=").first ?? ""): expected KEY=VALUE")
            }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        return VariableResolver(variables: values)
    }

    /// Loads the pipeline, printing every error (exit 2) and every warning to stderr.
    func load(_ file: String) throws -> PipelineDefinition {
        let loader = PipelineLoader(registry: PipelineCommand.registry, variables: try resolver())
        do {
            let pipeline = try loader.load(path: file)
            for warning in pipeline.warnings { Console.error("warning: \(warning)") }
            return pipeline
        } catch {
            for diagnostic in error.diagnostics { Console.error("error: \(diagnostic)") }
            throw CLIError(exitCode: 2, message: nil)
        }
    }
}

/// An error that ends the command with an exit code and, when it has one, a message on stderr.
struct CLIError: Error {
    var exitCode: Int32
    var message: String?
}

extension CLIError {
    /// Prints the message and exits with the code (ArgumentParser's `ExitCode`).
    func exit() -> ExitCode {
        if let message { Console.error("error: \(message)") }
        return ExitCode(exitCode)
    }
}
