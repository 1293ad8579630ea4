import ArgumentParser
import Stages

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a pipeline file without touching any store or org.",
        discussion: "Prints every error and warning (not only the first) and exits 2 when there is an error.")

    @Argument(help: "The pipeline file (JSON).")
    var file: String

    @OptionGroup var variables: VariableOptions

    func run() throws {
        do {
            let pipeline = try variables.load(file)
            Console.output("\(pipeline.file): valid — \(pipeline.stages.count) stages, \(pipeline.soups.count) soups, \(pipeline.syncs.count) syncs")
        } catch let error as CLIError {
            throw error.exit()
        }
    }
}

struct GraphCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Print a pipeline's stage graph as a Mermaid or Graphviz DOT diagram.",
        discussion: "Solid edges carry records (from); dashed edges only order stages (after).")

    enum Format: String, ExpressibleByArgument {
        case mermaid, dot
    }

    @Argument(help: "The pipeline file (JSON).")
    var file: String

    @Option(help: "mermaid or dot.")
    var format: Format = .mermaid

    @OptionGroup var variables: VariableOptions

    func run() throws {
        do {
            let pipeline = try variables.load(file)
            let graph = StageGraph(stages: pipeline.stages)
            Console.output(format == .mermaid ? graph.mermaid(title: pipeline.name) : graph.dot(title: pipeline.name))
        } catch let error as CLIError {
            throw error.exit()
        }
    }
}
