import Glibc

/// The calling thread as a number (`pthread_self`), equal only to itself among the threads alive: how a call learns
/// that it was made from inside a callback the engine is running on this same thread, and must not wait for it.
/// Never 0, which callers use for "no thread".
package func currentThreadIdentity() -> UInt { UInt(pthread_self()) }
