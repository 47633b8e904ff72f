; oooi-digest: d439c36e27548cf90aa98fdf6a2f3b8c70293db02c2d51c77e9a7e59a5d3cb37
$ORIGIN konnectivity.beta.clusters.example.com.
$TTL 30
@ IN SOA ns.konnectivity.beta.clusters.example.com. hostmaster.konnectivity.beta.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.konnectivity.beta.clusters.example.com.
ns IN A 192.0.2.3
@ IN A 192.0.2.4
