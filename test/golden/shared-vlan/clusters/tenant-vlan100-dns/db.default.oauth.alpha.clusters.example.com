; oooi-digest: 6e3a8288059ca9dc1619f4b40adc3753ebd9a8e6fd5a9b9fec0678c82acbb001
$ORIGIN oauth.alpha.clusters.example.com.
$TTL 30
@ IN SOA ns.oauth.alpha.clusters.example.com. hostmaster.oauth.alpha.clusters.example.com. 1 7200 3600 1209600 30
@ IN NS ns.oauth.alpha.clusters.example.com.
ns IN A 127.0.0.1
@ IN A 172.30.200.10
