use super::*;
use serde_json::json;

// Reference values printed by YCSB core 0.17.0 itself (jshell on site.ycsb:core:0.17.0).
#[test]
fn fnvhash64_matches_ycsb() {
    assert_eq!(fnvhash64(0), 6284781860667377211);
    assert_eq!(fnvhash64(1), 8517097267634966620);
    assert_eq!(fnvhash64(999), 2071219101098386137);
    assert_eq!(fnvhash64(123456789), 2350796791908741607);
    assert_eq!(fnvhash64(-5), 8164698058649250233);
}

#[test]
fn key_names_are_user_and_the_hash() {
    let cfg = YcsbConfig::with_records(1000);
    assert_eq!(cfg.key_name(0), "user6284781860667377211");
    assert_eq!(cfg.key_name(999), "user2071219101098386137");
    let mut ordered = cfg.clone();
    ordered.insertorder = InsertOrder::Ordered;
    assert_eq!(ordered.key_name(5), "user5");
    ordered.zeropadding = 8;
    assert_eq!(ordered.key_name(5), "user00000005");
    // as Java's Long.toString pads: the sign counts in the width
    assert_eq!(ordered.key_name(-5), "user000000-5");
    assert_eq!(ordered.key_name(i64::MIN), "user-9223372036854775808");
    // appended to what the buffer holds, without touching it
    let mut buf = b"xy".to_vec();
    cfg.key_into(999, &mut buf);
    assert_eq!(buf, b"xyuser2071219101098386137");
}

#[test]
fn zeta_matches_ycsb_exact_and_approximated() {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
    assert!(close(zeta(0, 1000, 0.99, 0.0), 7.728953217284729));
    assert!(close(zeta(0, 100_000, 0.99, 0.0), 12.778338062551246));
    // 2e7 terms: half summed, half by Euler–Maclaurin
    assert!(close(zeta(0, 20_000_000, 0.99, 0.0), 18.883448421285824), "{}", zeta(0, 20_000_000, 0.99, 0.0));
    assert!(close(zeta(0, 20_000_000, 0.5, 0.0), 8942.811667291402));
    // incremental == from scratch
    assert!(close(zeta(1000, 100_000, 0.99, zeta(0, 1000, 0.99, 0.0)), 12.778338062551246));
    // YCSB's precomputed zeta of 10^10 items at 0.99
    assert!(
        close(zeta(0, SCRAMBLED_ITEM_COUNT + 1, 0.99, 0.0), SCRAMBLED_ZETAN),
        "{}",
        zeta(0, SCRAMBLED_ITEM_COUNT + 1, 0.99, 0.0)
    );
}

fn draw(n: usize, mut f: impl FnMut(&mut Rng) -> i64) -> std::collections::BTreeMap<i64, u64> {
    let mut rng = Rng::new(42);
    let mut counts = std::collections::BTreeMap::new();
    for _ in 0..n {
        *counts.entry(f(&mut rng)).or_insert(0) += 1;
    }
    counts
}

#[test]
fn zipfian_head_has_the_theoretical_shares() {
    let mut z = Zipfian::new(0, 999, 0.99, None);
    let n = 200_000;
    let counts = draw(n, |r| z.next(r));
    let zetan = zeta(0, 1000, 0.99, 0.0);
    for item in 0..3i64 {
        let want = 1.0 / ((item + 1) as f64).powf(0.99) / zetan;
        let got = counts[&item] as f64 / n as f64;
        assert!((got - want).abs() < 0.01, "item {item}: {got} vs {want}");
    }
    assert!(counts.keys().all(|k| (0..1000).contains(k)));
}

#[test]
fn scrambled_zipfian_stays_in_range_and_its_hottest_key_is_ycsbs() {
    let mut g = ScrambledZipfian::new(0, 9999, ZIPFIAN_CONSTANT);
    let counts = draw(100_000, |r| g.next(r));
    assert!(counts.keys().all(|k| (0..10_000).contains(k)));
    // the zipfian's item 0 (share 1/zetan = 3.8%) lands on fnvhash64(0) % 10000
    let hottest = counts.iter().max_by_key(|(_, c)| **c).unwrap();
    assert_eq!(*hottest.0, fnvhash64(0) % 10_000);
    let share = *hottest.1 as f64 / 100_000.0;
    assert!((share - 1.0 / SCRAMBLED_ZETAN).abs() < 0.005, "{share}");
}

#[test]
fn hotspot_and_uniform_split_as_configured() {
    let g = Hotspot::new(0, 999, 0.2, 0.8);
    let counts = draw(100_000, |r| g.next(r));
    let hot: u64 = counts.range(0..200).map(|(_, c)| c).sum();
    assert!((hot as f64 / 100_000.0 - 0.8).abs() < 0.01, "{hot}");
    assert!(counts.keys().all(|k| (0..1000).contains(k)));
    let u = UniformLong::new(5, 14);
    let counts = draw(100_000, |r| u.next(r));
    assert_eq!(counts.keys().copied().collect::<Vec<_>>(), (5..15).collect::<Vec<_>>());
    assert!(counts.values().all(|c| (*c as f64 / 10_000.0 - 1.0).abs() < 0.06));
}

#[test]
fn latest_prefers_the_newest_records_and_follows_inserts() {
    let inserts = AckCounter::new(1000);
    assert_eq!(inserts.last_value(), 999);
    let mut g = SkewedLatest::new(inserts.last_value());
    let counts = draw(50_000, |r| g.next(inserts.last_value(), r));
    assert!(counts.keys().all(|k| (1..1000).contains(k)));
    let newest = counts.iter().max_by_key(|(_, c)| **c).unwrap().0;
    assert_eq!(*newest, 999);
    // acknowledged out of order: the limit moves only over contiguous acknowledgements
    let (a, b) = (inserts.next_value(), inserts.next_value());
    assert_eq!((a, b), (1000, 1001));
    inserts.acknowledge(b);
    assert_eq!(inserts.last_value(), 999);
    inserts.acknowledge(a);
    assert_eq!(inserts.last_value(), 1001);
    let counts = draw(50_000, |r| g.next(inserts.last_value(), r));
    assert_eq!(*counts.iter().max_by_key(|(_, c)| **c).unwrap().0, 1001);
}

#[test]
fn the_key_chooser_never_picks_a_record_not_yet_inserted() {
    // zipfian over recordcount + expected inserts, as CoreWorkload sizes it
    let mut cfg = YcsbConfig::with_records(1000);
    cfg.operationcount = 10_000;
    cfg.insertproportion = 0.05;
    let mut kc = KeyChooser::new(&cfg, 999);
    let mut rng = Rng::new(7);
    match &kc.chooser {
        Chooser::Zipfian(z) => assert_eq!(z.itemcount, 1000 + 1000 + 1),
        other => panic!("{other:?}"),
    }
    for _ in 0..20_000 {
        assert!((0..1000).contains(&kc.next_keynum(999, &mut rng)));
    }
    for _ in 0..1000 {
        let n = kc.scan_length(&mut rng);
        assert!((1..=1000).contains(&n));
        assert!(kc.field(&mut rng) < 10);
    }
}

#[test]
fn field_values_are_printable_and_sized() {
    let mut rng = Rng::new(1);
    for len in [0, 1, 6, 7, 100] {
        let v = field_value(len, &mut rng);
        assert_eq!(v.len(), len);
        assert!(v.bytes().all(|b| (b' '..=b'~').contains(&b)), "{v}");
    }
}

#[test]
fn the_section_has_ycsbs_defaults_and_refuses_bad_values() {
    let cfg: YcsbConfig = serde_json::from_value(json!({"recordcount": 100})).unwrap();
    assert_eq!((cfg.fieldcount, cfg.fieldlength, cfg.readallfields, cfg.writeallfields), (10, 100, true, false));
    assert_eq!(
        (cfg.requestdistribution, cfg.zipfianconstant, cfg.insertorder),
        (Distribution::Zipfian, 0.99, InsertOrder::Hashed)
    );
    assert_eq!(
        (cfg.minscanlength, cfg.maxscanlength, cfg.scanlengthdistribution),
        (1, 1000, ScanLengthDistribution::Uniform)
    );
    assert_eq!((cfg.phase, cfg.insertcount()), (Phase::Run, 100));
    assert_eq!(cfg.validate(), Ok(()));
    let bad = |extra: serde_json::Value| {
        let mut doc = json!({"recordcount": 100});
        for (k, v) in extra.as_object().unwrap() {
            doc[k] = v.clone();
        }
        match serde_json::from_value::<YcsbConfig>(doc) {
            Ok(cfg) => cfg.validate().err().map(String::from),
            Err(e) => Some(e.to_string()),
        }
    };
    assert_eq!(
        bad(json!({"insertstart": 50, "insertcount": 60})).unwrap(),
        "ycsb: recordcount must be at least insertstart + insertcount (and insertcount at least 1)"
    );
    assert_eq!(bad(json!({"recordcount": 0})).unwrap(), "ycsb.recordcount must be at least 1");
    assert_eq!(
        bad(json!({"maxscanlength": 0})).unwrap(),
        "ycsb: scan lengths need 1 <= minscanlength <= maxscanlength"
    );
    assert!(bad(json!({"requestdistribution": "exponential"})).unwrap().starts_with("unknown variant `exponential`"));
    assert!(bad(json!({"fieldcnt": 3})).unwrap().starts_with("unknown field `fieldcnt`"));
    assert_eq!(bad(json!({"insertstart": 50, "insertcount": 50})), None);
}

#[test]
fn workloads_a_to_f_have_ycsbs_proportions() {
    let (mix, dist) = workload_mix("A").unwrap();
    assert_eq!((mix, dist), (&[("READ", 0.5), ("UPDATE", 0.5)][..], Distribution::Zipfian));
    assert_eq!(workload_mix("d").unwrap().1, Distribution::Latest);
    assert_eq!(workload_mix("e").unwrap().0, &[("SCAN", 0.95), ("INSERT", 0.05)][..]);
    assert_eq!(workload_mix("f").unwrap().0, &[("READ", 0.5), ("READ-MODIFY-WRITE", 0.5)][..]);
    for w in ["a", "b", "c", "d", "e", "f"] {
        let total: f64 = workload_mix(w).unwrap().0.iter().map(|(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-12);
    }
    assert!(workload_mix("g").is_none());
    let e = workload("e").unwrap();
    assert_eq!(
        e,
        json!({"mix": [{"op": "SCAN", "weight": 0.95}, {"op": "INSERT", "weight": 0.05}],
                         "ycsb": {"requestdistribution": "zipfian", "insertproportion": 0.05, "maxscanlength": 100,
                                  "scanlengthdistribution": "uniform"}})
    );
    assert_eq!(workload("D").unwrap()["ycsb"], json!({"requestdistribution": "latest", "insertproportion": 0.05}));
    assert!(workload("").is_none());
}
