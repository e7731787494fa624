import Glibc
import Synchronization

/// A `Mutex` that ThreadSanitizer can see.
///
/// The standard library's `Mutex` locks with futexes inside the (uninstrumented) runtime, so under
/// `--sanitize=thread` every access it guards looks unsynchronized: a counter bumped by two threads under
/// `withLock` is reported as a data race (Swift 6.3, Linux). In a ThreadSanitizer build, `Lock` tells the
/// sanitizer about each acquire and release (`__tsan_acquire`/`__tsan_release`, found at start-up); in any other
/// build it is exactly a `Mutex` plus one never-taken branch.
package struct Lock<Value: ~Copyable>: ~Copyable {
    private let mutex: Mutex<Value>
    /// The address the sanitizer knows this lock by; nil without ThreadSanitizer.
    private let token: UnsafeMutableRawPointer?

    package init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
        token = ThreadSanitizerHooks.shared.map { _ in .allocate(byteCount: 1, alignment: 1) }
    }

    deinit { token?.deallocate() }

    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            guard let token, let hooks = ThreadSanitizerHooks.shared else { return try body(&value) }
            hooks.acquire(token)
            defer { hooks.release(token) }
            return try body(&value)
        }
    }
}

extension Lock: @unchecked Sendable where Value: ~Copyable {}

/// ThreadSanitizer's annotation entry points, when the process runs under it.
struct ThreadSanitizerHooks: Sendable {
    typealias Hook = @convention(c) (UnsafeMutableRawPointer?) -> Void
    let acquire: Hook
    let release: Hook

    static let shared: ThreadSanitizerHooks? = {
        guard let acquire = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_acquire"),
            let release = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_release")
        else { return nil }
        return ThreadSanitizerHooks(
            acquire: unsafeBitCast(acquire, to: Hook.self), release: unsafeBitCast(release, to: Hook.self))
    }()
}
