//! Where servers are on the simulated network: their addresses and ports,
//! below both the server node and the wire (byte-stream) front end.

use crate::zab::ServerId;

pub const CLIENT_PORT: u16 = 2181;
pub const PEER_PORT: u16 = 2888;
/// Where servers built with `wire: true` serve byte-stream (jute) clients.
pub const WIRE_PORT: u16 = 2182;

/// The address of server `id` on the simulated network.
pub fn server_ip(id: ServerId) -> std::net::IpAddr {
    std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, id as u8))
}
