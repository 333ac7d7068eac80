//! The daemon's hold on its socket: the lock that makes it the only `synapsed` for a socket
//! ([`lock`]), binding with stale-socket recovery and private permissions ([`socket`]), the peer
//! uid check on every request ([`peer`]), the signals that stop it ([`signals`]), the clean-up
//! of processes ([`orphans`]) and files ([`debris`]) a killed predecessor left. The owner of
//! every task it spawns, the owner mark on its child processes and giving memory back are the
//! extension contract's (`synapse_command::tasks`, `synapse_command::daemon_process`): every
//! room needs them.

pub mod debris;
pub mod lock;
pub mod orphans;
pub mod peer;
pub mod signals;
pub mod socket;
