import Foundation
import Synchronization

/// A program the tests start with `posix_spawn`. Foundation's `Process.run()` is not safe while
/// other threads open and close descriptors (swift-corelibs-foundation #4772, #4795, #4810): test
/// runs crashed inside it (signal 11) while other tests' emulators served. No test launches
/// through it; every child goes through this type instead.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard outputs goes.
    public enum Output: Sendable {
        case discarded
        /// Created or truncated, readable by this user only.
        case file(String)
        /// A pipe this process reads with ``readLine()``.
        case pipe
    }

    /// How the child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)

        /// The exit code, or the signal's number when the child was killed.
        public var code: Int32 {
            switch self {
            case .exited(let code), .signalled(let code): code
            }
        }
    }

    public let pid: pid_t
    /// The read end of the stdout pipe (``Output/pipe``), or -1.
    private let pipeDescriptor: Int32
    private let termination = Mutex<Termination?>(nil)

    /// Starts `executable` with `arguments`; stdin is /dev/null and no other descriptor of this
    /// process reaches the child (an inherited listening socket of another test's emulator would
    /// keep its port bound for as long as the child runs).
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                workingDirectory: String? = nil, stdout: Output = .discarded, stderr: Output = .discarded) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var pipeEnds: [Int32] = [-1, -1]
        for (descriptor, output) in [(Int32(1), stdout), (Int32(2), stderr)] {
            switch output {
            case .discarded:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .pipe:
                precondition(descriptor == 1 && pipeEnds[0] == -1, "only stdout can be a pipe")
                // Close-on-exec (`pipe2` is not imported): no other child inherits the pipe.
                guard pipe(&pipeEnds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
                for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
            }
        }
        Self.closeInheritedDescriptors(&actions)
        // A working folder through the shell, which changes to it and then becomes the program.
        let (program, list) = workingDirectory.map { ("/bin/sh", ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, $0, executable] + arguments) }
            ?? (executable, [executable] + arguments)
        let argv = list.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0)=\($1)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, envp)
        if pipeEnds[1] != -1 { close(pipeEnds[1]) }
        guard spawned == 0 else {
            if pipeEnds[0] != -1 { close(pipeEnds[0]) }
            throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: executable])
        }
        self.pid = pid
        self.pipeDescriptor = pipeEnds[0]
    }

    deinit {
        if pipeDescriptor != -1 { close(pipeDescriptor) }
    }

    /// Runs `executable` to its end; its output is returned as text.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           workingDirectory: String? = nil) throws -> (termination: Termination, stdout: String, stderr: String) {
        let base = NSTemporaryDirectory() + "child-" + UUID().uuidString
        defer { for suffix in [".out", ".err"] { try? FileManager.default.removeItem(atPath: base + suffix) } }
        let child = try ChildProcess(executable, arguments, environment: environment, workingDirectory: workingDirectory,
                                     stdout: .file(base + ".out"), stderr: .file(base + ".err"))
        let termination = child.wait()
        let stdout = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return (termination, stdout, stderr)
    }

    /// How the child ended, or nil while it runs.
    public func poll() -> Termination? {
        termination.withLock { ended in
            if ended == nil {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { ended = Self.termination(status) }
            }
            return ended
        }
    }

    /// Waits for the child to end (on this thread).
    @discardableResult
    public func wait() -> Termination {
        if let ended = poll() { return ended }
        // Waited for without reaping it: only `poll()` reaps, under the lock, so `kill()` never
        // signals a pid that was reaped (and maybe reused) meanwhile.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
        return poll() ?? .exited(-1)
    }

    /// Sends `signal` unless the child has already been reaped (its pid may be reused).
    public func kill(_ signal: Int32 = SIGKILL) {
        termination.withLock { ended in
            if ended == nil { _ = Glibc.kill(pid, signal) }
        }
    }

    /// The next line of the stdout pipe, without its newline; nil at its end.
    public func readLine() -> String? {
        precondition(pipeDescriptor != -1, "stdout is not a pipe")
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(pipeDescriptor, &byte, 1)
            if count == -1 && errno == EINTR { continue }
            if count <= 0 { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Exited: the code in bits 8–15; killed: the signal in the low 7 bits.
    private static func termination(_ status: Int32) -> Termination {
        status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
    }

    /// Closes every descriptor above stderr in the child (glibc's
    /// `posix_spawn_file_actions_addclosefrom_np`, looked up as Swift does not import it).
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }
}
