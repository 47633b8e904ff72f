; oooi-digest: ac369590d654554554eb1d82ad409bc91177b52583e46cee7f6b73d8868586ca
$ORIGIN konnectivity.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.konnectivity.alpha.clusters.example.com. hostmaster.konnectivity.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.konnectivity.alpha.clusters.example.com.
ns IN A 127.0.8.3
@ IN A 127.0.8.4
