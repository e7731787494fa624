import Foundation
import Glibc
import Synchronization

@testable import AmbienceAudioTestSupport
@testable import AmbienceTestSupport

/// A unix socket where a bus should be, that never says a word (issue #32, class 4): what a client meets when the
/// daemon behind an address hangs in the kernel, or something else took its path.
/// - `.accepting`: every connection is accepted at once and then never read from or written to;
/// - `.neverAccepting`: nothing is ever accepted, and the listen queue (one place) is already taken by a connection
///   of the socket's own, so every `connect()` there waits for ever.
final class MuteBusSocket: Sendable {
    enum Behaviour { case accepting, neverAccepting }

    let address: String
    private let path: String
    private let listener: Int32
    /// Connections accepted (or the one that fills the queue), held open until `close()`.
    private let held = Mutex<[Int32]>([])
    private let stopped = Atomic<Bool>(false)
    private let acceptorDone = DispatchSemaphore(value: 0)
    private let behaviour: Behaviour

    init(path: String, _ behaviour: Behaviour) throws {
        self.path = path
        self.behaviour = behaviour
        address = "unix:path=" + path
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw FixtureError.toolFailed("socket: \(String(cString: strerror(errno)))") }
        unlink(path)
        var name = try Self.socketAddress(path)
        let bound = withUnsafePointer(to: &name) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, behaviour == .accepting ? 64 : 0) == 0 else {
            Glibc.close(listener)
            throw FixtureError.toolFailed("bind/listen \(path): \(String(cString: strerror(errno)))")
        }
        switch behaviour {
        case .accepting:
            Thread { [self] in acceptForever() }.start()
        case .neverAccepting:
            // A backlog of 0 still queues one connection; this one takes that place, so the next connect waits.
            let filler = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            let connected = withUnsafePointer(to: &name) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            held.withLock { $0.append(filler) }
            guard connected == 0 else {
                close()
                throw FixtureError.toolFailed(
                    "filling the listen queue of \(path): \(String(cString: strerror(errno)))")
            }
            acceptorDone.signal()
        }
    }

    deinit { close() }

    /// Stops accepting, closes every connection it holds and removes the socket. Safe to call more than once.
    func close() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = acceptorDone.wait(timeout: .now() + 5)  // the acceptor looks at `stopped` every 50 ms
        let fds = held.withLock { fds in
            defer { fds.removeAll() }
            return fds
        }
        for fd in fds { Glibc.close(fd) }
        Glibc.close(listener)
        unlink(path)
    }

    private func acceptForever() {
        defer { acceptorDone.signal() }
        while !stopped.load(ordering: .acquiring) {
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) > 0 else { continue }
            let fd = accept(listener, nil, nil)
            if fd >= 0 { held.withLock { $0.append(fd) } }
        }
    }

    private static func socketAddress(_ path: String) throws -> sockaddr_un {
        var name = sockaddr_un()
        name.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: name.sun_path) else {
            throw FixtureError.toolFailed("socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &name.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return name
    }
}

/// What `/proc` says about another process of the test's: its threads and its peak memory.
enum ProcessThreads {
    /// The `connect` system call's number, as `/proc/PID/task/TID/syscall` shows it.
    #if arch(x86_64)
        static let connectCall = "42"
    #elseif arch(arm64)
        static let connectCall = "203"
    #else
        static let connectCall = "?"
    #endif

    /// How many threads the process has now (0 when it is gone).
    static func count(of pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count) ?? 0
    }

    /// How many of its threads wait in `connect()` now: on a unix socket whose listen queue is full the kernel shows
    /// `unix_wait_for_peer` as their wait channel; failing that, the system call they are in says so.
    static func inConnect(of pid: pid_t) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.filter { task in
            let folder = "/proc/\(pid)/task/\(task)/"
            let channel = (try? String(contentsOfFile: folder + "wchan", encoding: .utf8)) ?? ""
            let call = (try? String(contentsOfFile: folder + "syscall", encoding: .utf8))?.split(separator: " ").first
            return channel == "unix_wait_for_peer" || call.map(String.init) == connectCall
        }.count
    }

    /// The process's peak resident set (`VmHWM`), in bytes; nil once it is gone.
    static func peakResidentBytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({
                Int($0)
            })
        else { return nil }
        return kilobytes * 1024
    }
}
