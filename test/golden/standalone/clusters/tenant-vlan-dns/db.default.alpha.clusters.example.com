; oooi-digest: dad066683ca25686907766ce55b4d622855bfa48065d54ff217a3dc11b7ec928
$ORIGIN alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.alpha.clusters.example.com. hostmaster.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.alpha.clusters.example.com.
ns IN A 127.0.0.1
*.apps IN A 172.30.200.10
api IN A 172.30.200.10
api-int IN A 172.30.200.10
ignition IN A 172.30.200.10
konnectivity IN A 172.30.200.10
oauth IN A 172.30.200.10
