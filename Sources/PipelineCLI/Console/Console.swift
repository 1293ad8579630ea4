import Foundation

/// Writes to standard output and standard error without buffering surprises.
package enum Console {
    /// A line on stderr.
    package static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Text on stderr, as is.
    static func errorRaw(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// A line on stdout.
    package static func output(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// `true` when stderr is a terminal (progress bars instead of plain lines).
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
}
