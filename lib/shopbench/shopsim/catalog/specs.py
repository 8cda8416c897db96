"""The control catalog's category specifications (seed 002 §3.1 and Appendix A; issue 27:
``shopsim.catalog`` split by concept): per category a price median and log-sigma, brands, neutral
style words and groups of product types that share one pool of mutually consistent facts (so facts
never contradict each other: a plant milk is never "grass-fed"). Apparel and shoes have size x colour
variants, some other groups colour-only variants, groceries none."""

from __future__ import annotations

from dataclasses import dataclass

from .categories import CATEGORIES, GROCERY_ONLY
from .words import CLAUSES

# ---- the category specifications -------------------------------------------------------------------


def _split(s: str | tuple[str, ...]) -> tuple[str, ...]:
    if isinstance(s, tuple):
        return s
    return tuple(x.strip() for x in s.split("|") if x.strip())


@dataclass(frozen=True)
class TypeGroup:
    """Product types that share one pool of mutually consistent facts. The first fact key is always
    used; the others are sampled."""

    types: tuple[tuple[str, float], ...]  # (type noun phrase, relative price factor)
    facets: tuple[tuple[str, tuple[str, ...]], ...]
    variants: str | None = None  # "size_colour" | "colour" | None (falls back to the category's)
    p_variants: float | None = None
    colours: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()


def _G(types: str, variants: str | None = None, p: float | None = None, colours: str = "", sizes: str = "",
       **facets: str) -> TypeGroup:  # fmt: skip
    ts = []
    for t in _split(types):
        name, _, f = t.partition(":")
        ts.append((name.strip(), float(f) if f else 1.0))
    return TypeGroup(tuple(ts), tuple((k, _split(v)) for k, v in facets.items()), variants, p, _split(colours),
                  _split(sizes))  # fmt: skip


@dataclass(frozen=True)
class CategorySpec:
    name: str
    median: float
    sigma: float
    brands: tuple[str, ...]
    styles: tuple[str, ...]  # neutral title words that assert no fact
    groups: tuple[TypeGroup, ...]
    variants: str | None = None
    p_variants: float = 0.0
    colours: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()

    @property
    def grocery(self) -> bool:
        return self.name in GROCERY_ONLY


APPAREL_COLOURS = "black|white|navy|heather grey|olive|burgundy|sand|forest green|sky blue|charcoal|rust"
GEAR_COLOURS = "black|graphite|navy|red|teal|orange|sage green|white|sand"
HOME_COLOURS = "white|ivory|charcoal|sage green|terracotta|navy|blush|oatmeal|slate blue"
LETTER_SIZES = "XS|S|M|L|XL|XXL"
SHOE_SIZES = "6|6.5|7|7.5|8|8.5|9|9.5|10|10.5|11|11.5|12|13"
COLOUR_FAMILY = "black|white|grey|navy|blue|green|red|brown|beige|pink"
AGES = "ages 3+|ages 5+|ages 6+|ages 8+|ages 10+|ages 14+"
STYLES_GENERAL = "Classic|Everyday|Essential|Signature|Heritage|Studio|Original|Select|Modern|Prime"

# fmt: off
SPECS: tuple[CategorySpec, ...] = (
    CategorySpec(
        "Clothing", 28.0, 0.6,
        _split("Northfield|Harbor & Pine|Lumen Row|Alder Street|Copper Fox|Wren & Vale|Tidewater Supply|"
               "Marlow Basics|Stonecrest|Juniper Lane|Fairhaven|Brightloom|Oak & Ember|Saltmarsh"),
        _split("Classic|Everyday|Essential|Weekend|Heritage|Studio|Coastal|Urban|Signature|Original|Modern"),
        (
            _G("thermal v-neck tee:0.9|crew-neck tee:0.7|long-sleeve tee:0.8|henley shirt|polo shirt:1.1|"
               "oxford shirt:1.4|flannel shirt:1.3|tank top:0.6|baseball tee:0.8",
               material="cotton|organic cotton|cotton-poly blend|bamboo jersey|slub cotton|pima cotton",
               fit="slim|regular|relaxed|oversized", pattern="solid|striped|heathered|pinstriped",
               feature="a tagless neckline|a chest pocket|reinforced shoulder seams|a curved hem"),
            _G("crew sweater:1.6|cardigan:1.7|quarter-zip pullover:1.6|turtleneck sweater:1.7|hoodie:1.3|"
               "sweater vest:1.3",
               material="merino wool|lambswool|cotton|cashmere blend|cotton-poly blend|alpaca blend",
               fit="slim|regular|relaxed|oversized", pattern="solid|cable-knit|ribbed|heathered",
               feature="ribbed cuffs|a kangaroo pocket|elbow patches|side slits"),
            _G("rain jacket:2.5|softshell jacket:2.6|windbreaker:1.9|anorak:2.3|rain shell:2.4",
               material="recycled polyester|ripstop nylon|nylon taffeta|polyester softshell",
               fit="regular|relaxed|athletic", feature="a packable hood|zip hand pockets|"
               "a water-repellent finish|taped seams|a drawcord hem"),
            _G("fleece jacket:1.8|fleece vest:1.4|quarter-zip fleece:1.6|sherpa jacket:2.2",
               material="polyester fleece|recycled fleece|sherpa fleece|grid fleece",
               fit="regular|relaxed|athletic", feature="zip hand pockets|thumbhole cuffs|a chest pocket|"
               "a stand-up collar"),
            _G("puffer jacket:3|insulated vest:2.2|puffer vest:2|parka:3.5",
               material="nylon taffeta|recycled polyester|ripstop nylon", fill="down|synthetic insulation",
               fit="regular|relaxed", feature="a detachable hood|zip hand pockets|a packable design|"
               "a storm flap"),
            _G("five-pocket jeans:1.6|denim shorts:1.1|denim jacket:2.2|denim skirt:1.3|carpenter jeans:1.7",
               colours="indigo|black|light blue|dark indigo|stone wash",
               material="stretch denim|rigid denim|organic cotton denim|recycled denim",
               fit="slim|straight|relaxed|tapered|bootcut", feature="a button fly|a zip fly|"
               "a raw hem|reinforced pockets"),
            _G("chino pants:1.4|cargo shorts|pleated skirt:1.3|dress trousers:1.8|cargo pants:1.4|"
               "pull-on shorts:0.9",
               material="cotton twill|stretch cotton|linen blend|recycled polyester",
               fit="slim|straight|relaxed|tapered", feature="an elastic waistband|a belt loop waist|"
               "side pockets|a hidden zip pocket"),
            _G("jogger pants:1.2|leggings|sweatpants:1.1|bike shorts:0.8|track jacket:1.6|running shorts:0.8",
               material="french terry|cotton-spandex|recycled polyester|nylon-spandex|brushed fleece",
               fit="slim|regular|relaxed|compressive", feature="a drawcord waist|zip pockets|"
               "moisture-wicking fabric|reflective details"),
            _G("wrap dress:1.8|shirt dress:1.7|maxi dress:1.9|slip dress:1.6|pajama set:1.4|robe:1.5|"
               "sleep shorts:0.7",
               material="cotton|viscose|satin|modal|linen|cotton poplin",
               fit="relaxed|regular|slim", pattern="solid|floral print|polka dot|striped|gingham"),
            _G("crew socks:0.4|ankle socks:0.35|no-show socks:0.35|hiking socks:0.5|dress socks:0.4",
               material="cotton|merino wool|bamboo viscose|nylon-spandex",
               pack_size="single pair|3-pack|6-pack", feature="a cushioned sole|arch support|a seamless toe|"
               "a reinforced heel"),
            _G("boxer briefs:0.6|briefs:0.5|undershirt:0.6|sports bra:0.9|bralette:0.8",
               material="cotton|bamboo viscose|modal|nylon-spandex|merino wool",
               pack_size="single pack|3-pack|6-pack", feature="a seamless knit|a soft waistband|"
               "a tagless label|moisture-wicking fabric"),
        ),
        variants="size_colour", p_variants=1.0, colours=_split(APPAREL_COLOURS), sizes=_split(LETTER_SIZES),
    ),
    CategorySpec(
        "Shoes", 65.0, 0.55,
        _split("Stridewell|Kestrel Footwear|Trailmark|Cobble & Co|Pacer Lab|Moorland|Swiftsole|Hearthstep|"
               "Bayside Walk|Ridgeline|Loamwalk|Velo Stride|Fernside"),
        _split("Classic|Everyday|Original|Heritage|Urban|Trail|Studio|Signature|Weekend|Modern"),
        (
            _G("running shoes:1.2|trail running shoes:1.3|training shoes|walking shoes|court sneakers:0.9|"
               "basketball shoes:1.4",
               material="engineered mesh|knit textile|synthetic leather|recycled mesh",
               feature="a cushioned midsole|a grippy rubber outsole|a reflective heel tab|a removable insole",
               width="standard|wide"),
            _G("canvas sneakers:0.6|slip-on sneakers:0.7|loafers:1.2|boat shoes:1.1|chelsea boots:1.6|"
               "chukka boots:1.5|ballet flats:0.9|mules:0.9|oxford shoes:1.5",
               material="canvas|full-grain leather|suede|vegan leather|nubuck",
               feature="a padded collar|a cushioned footbed|a stitched welt|a pull-on loop|a non-slip sole",
               width="standard|wide|narrow"),
            _G("hiking boots:1.7|snow boots:1.6|work boots:1.8|winter boots:1.6",
               material="waterproof leather|nubuck|ballistic nylon|suede",
               feature="a lugged outsole|a gusseted tongue|a composite toe|a padded ankle collar",
               width="standard|wide"),
            _G("rain boots:0.8|clogs:0.7|slides:0.5|garden shoes:0.5",
               material="natural rubber|EVA foam|recycled rubber",
               feature="a contoured footbed|a textured sole|a pull tab|a cushioned insole"),
            _G("sandals:0.7|flip-flops:0.4|sport sandals:0.8|slide sandals:0.6",
               material="leather|recycled webbing|cork|synthetic leather",
               feature="adjustable straps|a contoured footbed|a rubber sole"),
            _G("slippers:0.6|moccasins:0.8|house shoes:0.6|slipper boots:0.8",
               material="wool felt|sheepskin|suede|fleece-lined knit",
               feature="a rubber sole|a memory-foam footbed|a plush lining"),
        ),
        variants="size_colour", p_variants=1.0, colours=_split("black|white|brown|tan|navy|grey|olive|burgundy"),
        sizes=_split(SHOE_SIZES),
    ),
    CategorySpec(
        "Jewelry & Accessories", 25.0, 0.9,
        _split("Aurelia|Silver Fern|Marigold & Moss|Lark Atelier|Halcyon|Oro Vale|Everleigh|Cinder & Sage|"
               "Meridian Goods|Pennant|Linden Row|Quill & Crest"),
        _split("Classic|Signature|Everyday|Heritage|Modern|Studio|Essential|Select|Minimalist"),
        (
            _G("pendant necklace:1.2|chain necklace|stud earrings:0.8|hoop earrings:0.9|bangle bracelet|"
               "charm bracelet:1.1|stacking ring:0.8|anklet:0.6|cufflinks:1.1|drop earrings",
               material="sterling silver|14k gold-plated brass|stainless steel|solid 10k gold|"
               "rose gold-plated silver", finish="polished|brushed|hammered",
               stone="cubic zirconia|freshwater pearl|moonstone|garnet|opal"),
            _G("tote bag:1.5|crossbody bag:1.6|backpack:1.8|belt bag:1.1|weekender bag:2.5|laptop sleeve:1.1|"
               "messenger bag:1.8",
               variants="colour", p=0.6, colours=_split(GEAR_COLOURS),
               material="full-grain leather|vegan leather|waxed canvas|recycled nylon|cotton canvas",
               feature="a zip closure|an adjustable strap|an interior zip pocket|a magnetic snap",
               colour_family=COLOUR_FAMILY),
            _G("bifold wallet:0.9|card holder:0.6|coin purse:0.5|passport holder:0.7|zip wallet",
               variants="colour", p=0.4, colours=_split(GEAR_COLOURS),
               material="full-grain leather|vegan leather|recycled nylon|cork leather",
               feature="an RFID-blocking lining|a zip coin pocket|six card slots|an ID window",
               colour_family=COLOUR_FAMILY),
            _G("baseball cap:0.7|bucket hat:0.8|sun hat:0.9|trucker hat:0.7",
               variants="colour", p=0.5, colours=_split(GEAR_COLOURS),
               material="cotton twill|recycled polyester|straw|washed canvas",
               feature="an adjustable strap|UPF 50 sun protection|a moisture-wicking sweatband"),
            _G("knit beanie:0.6|winter gloves:0.7|infinity scarf:0.8|earmuffs:0.6|wool scarf:0.9",
               variants="colour", p=0.5, colours=_split(APPAREL_COLOURS),
               material="merino wool|acrylic knit|cashmere blend|alpaca blend",
               feature="a fleece lining|a ribbed knit|a chunky knit"),
            _G("aviator sunglasses:1.2|round sunglasses|wayfarer sunglasses|sport sunglasses:1.1|"
               "cat-eye sunglasses",
               material="acetate|metal|recycled plastic|titanium",
               feature="polarized lenses|UV400 protection|gradient lenses|mirrored lenses"),
            _G("analog watch:2.5|chronograph watch:3.2|digital watch:1.5|field watch:2.6|dress watch:3",
               material="stainless steel|titanium|resin|brushed brass",
               band="leather strap|mesh bracelet|silicone strap|nylon strap",
               water_resistance="30 m|50 m|100 m"),
            _G("leather belt:0.9|reversible belt|braided belt:0.9|canvas belt:0.7",
               material="full-grain leather|vegan leather|cotton webbing|braided elastic",
               feature="a brushed nickel buckle|a matte black buckle|a reversible buckle"),
        ),
    ),
    CategorySpec(
        "Home & Kitchen", 30.0, 0.8,
        _split("Hearth & Table|Oakhaven|Kindred Home|Ember Kitchen|Saltwood|Larder Co|Brightnest|Millbrook|"
               "Copperpot|Linen Lane|Nestwell|Greystone Home"),
        _split(STYLES_GENERAL),
        (
            _G("frying pan:1.2|skillet:1.3|saucepan:1.2|dutch oven:2.5|stockpot:1.8|saute pan:1.5|wok:1.3|"
               "grill pan:1.2",
               material="tri-ply stainless steel|enameled cast iron|hard-anodized aluminum|carbon steel|"
               "ceramic-coated aluminum",
               feature="an oven-safe handle|a tempered glass lid|a pour spout|a stay-cool handle",
               capacity="2-quart|3-quart|5-quart|8-quart"),
            _G("chef's knife:1.2|paring knife:0.6|bread knife:0.9|santoku knife:1.1|utility knife:0.7|"
               "steak knife set:1.5",
               material="German stainless steel|Japanese VG-10 steel|high-carbon stainless steel",
               handle="pakkawood|olive wood|polypropylene|walnut",
               feature="a full tang|a blade guard|a granton edge"),
            _G("cutting board:0.8|serving board:0.9|salad bowl|utensil crock:0.6|spoon rest:0.4|"
               "charcuterie board:1.1",
               material="acacia wood|bamboo|olive wood|walnut|maple",
               feature="a juice groove|non-slip feet|handles on both ends|a food-safe oil finish"),
            _G("mixing bowl set|colander:0.6|measuring cup set:0.5|salad spinner:0.8|food storage set|"
               "baking sheet:0.6|muffin pan:0.6",
               material="stainless steel|BPA-free plastic|borosilicate glass|silicone",
               feature="non-slip bases|nesting storage|dishwasher-safe parts|snap-lock lids"),
            _G("coffee maker:2.5|electric kettle:1.5|toaster:1.5|blender:2.5|hand mixer:1.4|air fryer:3|"
               "rice cooker:2|slow cooker:2|food processor:3|espresso machine:5",
               variants="colour", p=0.3, colours=_split("black|white|brushed steel|sage green|cream|red"),
               wattage="600 W|800 W|1000 W|1200 W|1500 W",
               feature="a keep-warm setting|a digital timer|dishwasher-safe parts|an auto shut-off",
               colour_family=COLOUR_FAMILY),
            _G("duvet cover:2|sheet set:2|quilt:2.5|comforter:2.8|pillowcase pair:0.8|mattress protector:1.6",
               variants="colour", p=0.4, colours=_split(HOME_COLOURS),
               material="percale cotton|sateen cotton|linen|bamboo viscose|microfiber|organic cotton",
               bed_size="twin|full|queen|king", colour_family=COLOUR_FAMILY),
            _G("bath towel set:1.3|hand towel set:0.7|bath mat:0.8|washcloth set:0.5|beach towel:0.9|"
               "bath sheet:1.1",
               variants="colour", p=0.4, colours=_split(HOME_COLOURS),
               material="Turkish cotton|organic cotton|bamboo viscose|waffle-weave cotton",
               weight="450 gsm|550 gsm|650 gsm|750 gsm", colour_family=COLOUR_FAMILY),
            _G("throw blanket|throw pillow cover:0.5|knit throw:1.1|floor cushion",
               variants="colour", p=0.4, colours=_split(HOME_COLOURS),
               material="chunky knit acrylic|cotton|faux fur|wool blend|velvet",
               style="mid-century|farmhouse|minimalist|boho", colour_family=COLOUR_FAMILY),
            _G("table lamp:1.6|wall mirror:2|picture frame:0.5|candle holder:0.5|vase:0.7|wall clock:0.9|"
               "bookend set:0.7|floor lamp:2.4",
               material="ceramic|brass|glass|oak veneer|marble",
               style="mid-century|farmhouse|minimalist|boho|coastal", colour_family=COLOUR_FAMILY),
            _G("storage basket:0.7|laundry hamper:1.1|magazine basket:0.6|shelf bin set:0.8",
               material="seagrass|rattan|cotton rope|water hyacinth",
               style="mid-century|farmhouse|minimalist|boho|coastal", colour_family=COLOUR_FAMILY),
        ),
    ),
    CategorySpec(
        "Beauty & Personal Care", 14.0, 0.7,
        _split("Glow Theory|Petal & Pine|Lumiere Skin|Dewdrop Lab|Verdant Botanics|Clearwell|"
               "Bloom Apothecary|Silken|Purely North|Sea Fern Naturals|Halo Beauty|Radiant Roots"),
        _split("Daily|Essential|Signature|Pure|Original|Studio|Classic|Everyday"),
        (
            _G("facial cleanser|moisturizer:1.3|night cream:1.5|eye cream:1.5|face serum:1.6|"
               "sunscreen lotion:1.1|exfoliating toner:1.1|sheet mask set|lip balm:0.4",
               skin_type="dry|oily|combination|sensitive|normal",
               ingredient="hyaluronic acid|niacinamide|vitamin C|ceramides|aloe vera|squalane",
               pack_size="1 fl oz bottle|1.7 fl oz jar|3.4 fl oz bottle|6.8 fl oz bottle",
               formula="fragrance-free|lightly scented|vegan|paraben-free"),
            _G("shampoo|conditioner|hair mask:1.3|leave-in conditioner:1.1|dry shampoo:0.9|styling cream|"
               "hair oil:1.3|curl cream",
               hair_type="curly|fine|thick|color-treated|damaged|dry",
               scent="citrus|lavender|coconut|eucalyptus|sandalwood|rosemary mint",
               formula="sulfate-free|paraben-free|vegan|silicone-free",
               pack_size="8 fl oz bottle|12 fl oz bottle|16 fl oz bottle|33.8 fl oz pump bottle"),
            _G("lipstick|lip gloss:0.9|mascara|eyeliner pencil:0.7|foundation:1.6|concealer:1.2|blush|"
               "eyeshadow palette:1.8|setting powder:1.3|brow pencil:0.8",
               finish="matte|satin|dewy|shimmer|natural",
               formula="long-wear|waterproof|buildable|smudge-proof", diet="vegan|cruelty-free|talc-free"),
            _G("hair dryer:3.5|flat iron:3|curling wand:3|beard trimmer:2.8|electric shaver:4|"
               "electric toothbrush:3|facial cleansing brush:2.2",
               power_source="a corded plug|a USB-C rechargeable battery|a lithium-ion battery",
               feature="a travel pouch|a two-year warranty|an auto shut-off|a storage stand"),
            _G("body wash|hand cream:0.9|body lotion|shaving cream:0.8|body scrub:1.2|body oil:1.3",
               scent="citrus|lavender|coconut|eucalyptus|sandalwood|oatmeal",
               formula="paraben-free|moisturizing|vegan|sulfate-free",
               pack_size="4 fl oz tube|8 fl oz bottle|16 fl oz bottle|10 oz jar"),
            _G("bar soap:0.5|deodorant:0.8|bath bomb set:1.3|shampoo bar:0.7",
               scent="citrus|lavender|coconut|eucalyptus|sandalwood|oatmeal",
               formula="paraben-free|vegan|palm-oil-free", pack_size="single pack|3-pack|6-pack"),
        ),
    ),
    CategorySpec(
        "Electronics", 60.0, 1.0,
        _split("Voltaic|Nimbus Audio|Arcline|Pixelon|Quanta Tech|Helix Devices|Lumio|Corevo|Brightwire|"
               "Stratos|Kinetix|Ampere Lane"),
        _split("Pro|Air|Max|Mini|Plus|Lite|Core|Edge|One|Go|Neo|Ultra"),
        (
            _G("wireless earbuds:1.5|over-ear headphones:2.2|on-ear headphones:1.6|bluetooth speaker:1.4|"
               "party speaker:2.5|portable speaker|sports earbuds:1.2",
               variants="colour", p=0.35, colours=_split("black|white|graphite|navy|sage green|sand"),
               connectivity="Bluetooth 5.3|Bluetooth 5.0|Bluetooth with aptX",
               battery_life="8 hours|12 hours|20 hours|30 hours|40 hours",
               feature="active noise cancelling|IPX4 water resistance|a built-in microphone|"
               "multipoint pairing"),
            _G("laptop:12|chromebook:6|tablet:6|2-in-1 laptop:13|mini PC:8|e-reader:2.2",
               storage="64 GB|128 GB|256 GB|512 GB|1 TB", memory="4 GB|8 GB|16 GB|32 GB",
               screen="10-inch|11-inch|13-inch|14-inch|15.6-inch", feature="a backlit keyboard|"
               "a fingerprint reader|a USB-C charging port|an aluminum chassis"),
            _G("mechanical keyboard:1.3|wireless mouse:0.6|webcam:1.2|drawing tablet:1.4|"
               "presentation clicker:0.5|trackpad:1",
               variants="colour", p=0.3, colours=_split("black|white|graphite|silver"),
               connectivity="USB-C|Bluetooth|2.4 GHz wireless|USB-A",
               feature="plug-and-play setup|a braided cable|an aluminum housing|a two-year warranty"),
            _G("USB-C hub:0.8|docking station:2|KVM switch:1.2|USB-A hub:0.5",
               ports="4 ports|7 ports|11 ports", feature="an aluminum housing|a detachable cable|"
               "4K HDMI output|pass-through charging"),
            _G("laptop stand:0.7|monitor light bar:0.9|monitor arm:1.4|keyboard tray:1",
               material="aluminum|steel|bamboo", feature="adjustable height|cable management|"
               "a foldable design"),
            _G("USB-C cable:0.25|HDMI cable:0.25|Lightning cable:0.25|ethernet cable:0.2|extension cord:0.35|"
               "USB-C to USB-A cable:0.2",
               length="3 ft|6 ft|10 ft|15 ft", jacket="braided nylon|PVC|silicone|TPE",
               feature="gold-plated connectors|a strain-relief collar|a hook-and-loop cable tie"),
            _G("charging brick:0.5|wireless charger:0.6|power bank:0.8|car charger:0.4|travel adapter:0.5|"
               "charging station:0.9",
               output="20 W|30 W|45 W|65 W|100 W", ports="1 port|2 ports|3 ports|4 ports",
               feature="foldable prongs|overheat protection|a status display|fast charging"),
            _G("smart plug:0.4|smart bulb:0.3|streaming stick:0.8|smart display:2|smart speaker:1.5",
               works_with="Alexa|Google Home|Apple Home|Matter",
               connectivity="Wi-Fi|Bluetooth|Wi-Fi and Bluetooth",
               feature="a companion app|scheduling and timers|a two-year warranty"),
            _G("video doorbell:2|security camera:1.6|indoor camera:1|baby monitor camera:1.6",
               works_with="Alexa|Google Home|Apple Home|Matter", connectivity="Wi-Fi|Wi-Fi and Bluetooth",
               feature="two-way audio|night vision|motion alerts|local storage"),
            _G("fitness tracker:1.4|smartwatch:3.5|smart ring:3|kids smartwatch:1.5",
               variants="colour", p=0.4, colours=_split("black|silver|rose gold|navy|sage green"),
               connectivity="Bluetooth|Wi-Fi and Bluetooth|LTE and Bluetooth",
               feature="heart-rate tracking|sleep tracking|built-in GPS|an always-on display"),
        ),
    ),
    CategorySpec(
        "Sports & Outdoors", 35.0, 0.8,
        _split("Summit Trail|Peakform|Riverstone Outfitters|Apex Motion|Basecamp Gear|Cascade Sport|"
               "Ironbark Fitness|Northstar Athletics|Wildpine|Velocity Athletics|Coastline Sport|Timberline Co"),
        _split("Pro|Trail|Summit|Classic|Sport|Active|Expedition|Everyday|Core|Venture"),
        (
            _G("yoga mat|foam roller:0.8|resistance band set:0.7|jump rope:0.4|exercise ball:0.7|"
               "balance pad:0.8",
               variants="colour", p=0.4, colours=_split(GEAR_COLOURS),
               material="natural rubber|TPE|latex-free rubber",
               feature="a carrying strap|a non-slip surface|an exercise guide|alignment markings"),
            _G("adjustable dumbbell:4|kettlebell:1.3|weight plate:1.2|ankle weights:0.6|medicine ball|"
               "dumbbell pair:1.4",
               weight="5 lb|10 lb|15 lb|20 lb|25 lb|35 lb",
               material="cast iron|vinyl-coated iron|neoprene-coated steel|rubber-coated steel"),
            _G("dome tent:3.5|backpacking tent:5|cabin tent:6|beach shade tent:1.8|pop-up canopy:4",
               capacity="1-person|2-person|4-person|6-person", season="3-season|4-season|summer",
               feature="a rainfly|color-coded poles|a gear loft|a carrying bag"),
            _G("sleeping bag:2.5|camp quilt:2.2|mummy sleeping bag:2.6|camp blanket:1.2",
               variants="colour", p=0.3, colours=_split(GEAR_COLOURS),
               fill="synthetic insulation|down|recycled fibre",
               temp_rating="20°F|30°F|40°F|50°F", feature="a compression sack|a two-way zipper|"
               "a draft collar|a packable design"),
            _G("sleeping pad:2|camping pillow:0.6|camp cot:2.5|foam sleeping mat:1",
               material="open-cell foam|inflatable TPU|closed-cell foam|ripstop polyester",
               feature="a pump sack|a compression sack|a packable design|a non-slip base"),
            _G("headlamp:0.8|camping lantern|flashlight:0.8|solar lantern",
               lumens="200 lumens|400 lumens|800 lumens|1000 lumens",
               power_source="a rechargeable battery|AA batteries|solar charging",
               feature="a red-light mode|IPX6 water resistance|a magnetic base"),
            _G("insulated water bottle:0.9|hydration pack:1.8|camp mug:0.6|travel tumbler:0.8|"
               "collapsible water bottle:0.6",
               variants="colour", p=0.5, colours=_split(GEAR_COLOURS),
               capacity="12 oz|20 oz|24 oz|32 oz|40 oz", material="stainless steel|Tritan plastic|titanium",
               feature="a leakproof lid|a straw lid|a carabiner loop|a powder-coated grip"),
            _G("basketball|soccer ball:0.9|volleyball:0.9|football|rugby ball",
               ball_size="official size|youth size|size 4|mini size",
               material="composite leather|rubber|synthetic leather|machine-stitched PU",
               feature="deep channels|a butyl bladder|a textured grip"),
            _G("tennis racket:2.2|pickleball paddle:1.6|badminton racket:1.2|table tennis paddle:1",
               material="graphite|carbon fiber|aluminum|fiberglass",
               feature="a carrying case|a pre-strung frame|a cushioned grip|an edge guard"),
        ),
    ),
    CategorySpec(
        "Toys & Games", 22.0, 0.7,
        _split("Tinker Tots|Brightbox Toys|Puzzle Grove|Wonderkin|Little Lark|Playforge|Maple Meadow Toys|"
               "Starbeam Games|Hopscotch Lane|Gizmo Garage|Cubby Bear|Paper Kite Games"),
        _split("Classic|Deluxe|Junior|Family|Mini|Super|Original|Adventure|Discovery"),
        (
            _G("board game:1.3|card game:0.6|strategy game:1.6|party game|trivia game|cooperative game:1.3|"
               "dice game:0.6",
               players="2-4 players|2-6 players|3-8 players|1-5 players",
               play_time="15-minute|30-minute|45-minute|60-minute", age_range=AGES),
            _G("jigsaw puzzle|3D puzzle:1.2|floor puzzle:0.8|puzzle set:0.9",
               pieces="24 pieces|100 pieces|300 pieces|500 pieces|1000 pieces", age_range=AGES,
               feature="a poster guide|a resealable box|thick recycled board"),
            _G("building block set:1.4|magnetic tiles:1.6|marble run:1.3|wooden train set:1.5|stacking toy:0.5|"
               "shape sorter:0.6|construction set:1.4",
               material="wood|ABS plastic|silicone|recycled plastic",
               pieces="12 pieces|24 pieces|60 pieces|120 pieces|500 pieces", age_range=AGES),
            _G("plush bear:0.8|plush bunny:0.8|plush dinosaur:0.8|plush unicorn:0.8|plush dog:0.8",
               material="recycled polyester fill|organic cotton|minky fabric",
               height="8-inch|12-inch|18-inch|24-inch", age_range="ages 0+|ages 1+|ages 3+"),
            _G("remote-control car:1.6|remote-control truck:1.7|toy drone:2|toy excavator:1.1|"
               "race track set:1.5|toy fire truck:1",
               power_source="a rechargeable battery|AA batteries", age_range=AGES,
               feature="LED lights|sound effects|two speed settings|a spare battery"),
            _G("crayon set:0.3|watercolor paint set:0.6|colored pencil set:0.5|washable marker set:0.5|"
               "modeling clay kit:0.7|oil pastel set:0.5",
               colours="12 colours|24 colours|48 colours|64 colours",
               feature="a washable formula|a non-toxic formula|a storage tin", age_range=AGES),
        ),
    ),
    CategorySpec(
        "Tools & Home Improvement", 30.0, 0.9,
        _split("Ironclad Works|Forgeline|Benchmark Tools|Granite Ridge|Torqwell|Keystone Pro|Sawtooth Supply|"
               "Hammerfield|Boltline|Truegrade|Steelhead Tools|Plumbline"),
        _split("Pro|Heavy-Duty|Contractor|Classic|Max|Compact|Workshop|Jobsite|Essential"),
        (
            _G("cordless drill:3.5|impact driver:3.5|circular saw:4|jigsaw:3|orbital sander:2.5|"
               "rotary tool:2|oscillating multi-tool:3|reciprocating saw:4",
               voltage="12V|18V|20V|40V", kit="bare tool|kit with battery and charger",
               feature="a brushless motor|an LED work light|variable speed|a carrying case"),
            _G("claw hammer:0.8|adjustable wrench:0.7|socket set:1.6|pliers set:1.1|screwdriver set:0.9|"
               "hex key set:0.5|ratchet set:1.5",
               material="chrome vanadium steel|drop-forged steel|S2 tool steel|hardened carbon steel",
               feature="cushioned grips|a storage case|a lifetime warranty|magnetic tips"),
            _G("tape measure:0.5|laser distance measurer:1.5|measuring wheel:1.2|folding rule:0.5",
               length="16 ft|25 ft|35 ft|100 ft", feature="a belt clip|an auto-lock|a backlit display|"
               "a rubber-armoured case"),
            _G("laser level:2|torpedo level:0.5|stud finder:0.9|digital angle finder:0.9|box level:0.8",
               material="aluminum|ABS plastic|magnesium", feature="a magnetic base|a belt clip|"
               "a backlit display|a shock-absorbing case"),
            _G("paintbrush set:0.4|paint roller kit:0.5|painter's tape:0.3|drop cloth:0.4|caulk gun:0.4|"
               "putty knife set:0.3|sandpaper assortment:0.3",
               pack_size="single pack|3-pack|6-pack|12-pack", surface="interior|exterior|"
               "interior and exterior", feature="an ergonomic handle|a reusable design"),
            _G("LED light bulb:0.3|LED shop light:1.2|under-cabinet light:0.9|motion-sensor light:1|"
               "string lights:0.8|work light:1.2",
               colour_temp="2700K soft white|3000K warm white|4000K cool white|5000K daylight",
               lumens="450 lumens|800 lumens|1600 lumens|4000 lumens", pack_size="single pack|2-pack|4-pack"),
            _G("wall anchor kit:0.3|picture hanging kit:0.3|cabinet hinge set:0.5|door lever:0.9|"
               "deadbolt lock:1.3|shelf bracket set:0.5",
               material="zinc alloy|stainless steel|solid brass|nylon",
               finish="satin nickel|matte black|polished chrome|oil-rubbed bronze",
               pack_size="single pack|2-pack|4-pack"),
        ),
    ),
    CategorySpec(
        "Health & Household", 12.0, 0.6,
        _split("Clearbrook|Everfresh|Pure Haven|Wellspring|Brightside Home|Greenleaf Living|Daily Remedy|"
               "Tidy Nest|Sunward Health|Cedar & Salt|Homestead Basics|Vitalis"),
        _split("Daily|Essential|Everyday|Pure|Classic|Original|Value"),
        (
            _G("dish soap:0.5|all-purpose cleaner:0.6|glass cleaner:0.5|laundry detergent:1.3|"
               "fabric softener:0.9|stain remover:0.7|toilet bowl cleaner:0.5|hand soap refill:0.7",
               scent="lemon|lavender|fresh linen|eucalyptus mint|grapefruit",
               formula="plant-based|concentrated|hypoallergenic|dye-free",
               pack_size="16 fl oz bottle|32 fl oz bottle|64 fl oz jug|100 fl oz jug"),
            _G("dishwasher pods|laundry pods:1.2|disinfecting wipes:0.6|dryer sheets:0.5",
               pack_size="24-count tub|40-count tub|80-count box|120-count box",
               scent="lemon|lavender|fresh linen|eucalyptus mint|grapefruit",
               formula="plant-based|hypoallergenic|dye-free|phosphate-free"),
            _G("paper towels:1.2|toilet paper:1.3|facial tissues:0.6|paper napkins:0.5",
               pack_size="4-pack|6-pack|12-pack|24-pack", ply="1-ply|2-ply|3-ply",
               material="recycled paper|bamboo fibre|virgin pulp"),
            _G("trash bags:0.9|sandwich bags:0.4|freezer bags:0.5|compostable kitchen bags:0.8",
               pack_size="30-count box|50-count box|100-count box",
               feature="heavy-duty strength|recycled content|a leak-resistant seal|a tear-resistant build"),
            _G("aluminum foil:0.5|plastic wrap:0.4|parchment paper:0.5|wax paper:0.4",
               pack_size="single roll|2-roll pack|3-roll pack",
               feature="heavy-duty strength|a slide cutter|recycled content|a 200 sq ft roll"),
            _G("multivitamin|vitamin D3 softgels:0.8|fish oil softgels:1.2|probiotic capsules:1.6|"
               "magnesium tablets:0.9|melatonin gummies:0.8|vitamin C gummies:0.8|electrolyte powder:1.3",
               servings="30 servings|60 servings|90 servings|120 servings",
               diet="gluten-free|non-GMO|sugar-free|third-party tested"),
            _G("digital thermometer:1.2|heating pad:2.2|blood pressure monitor:3.5|humidifier:3|"
               "massage gun:4",
               power_source="AAA batteries|a corded plug|a USB-C rechargeable battery",
               feature="an auto shut-off|a large display|a two-year warranty|a storage case"),
            _G("first aid kit:1.6|reusable ice pack:0.8|pill organizer:0.6|knee brace:1.3|wrist brace:1.1",
               feature="a carrying case|a latex-free build|a compact design", pack_size="single pack|"
               "2-pack|family-size kit"),
        ),
    ),
    CategorySpec(
        "Automotive", 25.0, 0.9,
        _split("Gearhead Supply|Highway Nine|Torque & Tread|Motorwell|Drivewise|Chrome Lane|Redline Garage|"
               "Axle & Oak|Autovista|Pitstop Pro|Mileforge|Tarmac Co"),
        _split("Pro|Ultra|Max|Classic|Premium|Road|Garage|Touring|Sport"),
        (
            _G("car wash soap:0.6|ceramic spray coating:1|tire shine:0.6|auto glass cleaner:0.5|"
               "interior detailer:0.6|leather conditioner:0.7|carnauba wax:0.9|bug and tar remover:0.5",
               pack_size="16 fl oz bottle|24 fl oz spray bottle|64 fl oz jug|1 gallon jug",
               formula="pH-neutral|water-based|UV-protective|streak-free"),
            _G("microfiber towel set:0.6|wash mitt:0.4|drying towel:0.6|chamois:0.5",
               pack_size="single pack|3-pack|6-pack|12-pack", material="plush microfiber|chenille microfiber|"
               "waffle-weave microfiber"),
            _G("seat cover set:1.8|floor mat set:1.6|steering wheel cover:0.6|windshield sunshade:0.7|"
               "trunk organizer:1|headrest hook set:0.4|seat gap filler:0.5",
               variants="colour", p=0.4, colours=_split("black|grey|beige|brown|red"),
               material="neoprene|faux leather|all-weather rubber|polyester|mesh fabric",
               fitment="universal fit|a trim-to-fit design|a custom-fit pattern"),
            _G("tire inflator:1.6|jump starter:3|car vacuum:1.5|dash cam:2.5|phone mount:0.7|"
               "backup camera:2.2",
               power_source="a 12V plug|a rechargeable battery|a USB-C cable",
               feature="a digital display|an LED light|a two-year warranty|a carrying case"),
            _G("motor oil:1.1|transmission fluid:0.9|gear oil:0.8",
               pack_size="1 qt bottle|5 qt jug|1 gallon jug",
               formula="full synthetic|synthetic blend|high-mileage|conventional"),
            _G("coolant:0.7|brake fluid:0.4|windshield washer fluid:0.2|fuel injector cleaner:0.4",
               pack_size="12 fl oz bottle|1 qt bottle|1 gallon jug", formula="ready-to-use|concentrated|"
               "all-season"),
            _G("engine air filter:0.8|cabin air filter:0.7|oil filter:0.5",
               pack_size="single pack|2-pack|4-pack", fitment="universal fit|a vehicle-specific fit",
               feature="activated carbon|a high-flow design|easy installation"),
            _G("wiper blades:0.8|spark plug set:1|headlight bulbs:1.1|fuse assortment:0.4",
               pack_size="single pack|2-pack|4-pack", fitment="universal fit|a vehicle-specific fit",
               feature="easy installation|a two-year warranty"),
        ),
    ),
    CategorySpec(
        "Books", 15.0, 0.5,
        _split("Larkspur Press|Blue Heron Books|Inkwell House|Driftwood Publishing|Lantern Books|"
               "Paper Crane Press|Northlight Editions|Foxglove Press|Harborview Books|Quillmark|"
               "Willow & Quill Press|Cobalt House"),
        _split("Collected|Illustrated|Complete|Annotated|Classic|Essential|Anniversary|New"),
        (
            _G("mystery novel|thriller novel|romance novel|science fiction novel|fantasy novel|"
               "historical novel|literary novel|short story collection|graphic novel:1.3|poetry collection",
               book_format="paperback|hardcover|large-print paperback|mass-market paperback",
               pages="192 pages|256 pages|320 pages|448 pages|560 pages",
               audience="adult|young adult|middle grade", language="English|Spanish|French"),
            _G("cookbook:1.6|biography:1.3|memoir:1.2|history book:1.3|self-help book|travel guide|"
               "field guide|gardening book|science book|art book:1.8",
               book_format="paperback|hardcover|spiral-bound edition",
               pages="160 pages|224 pages|288 pages|352 pages|416 pages", language="English|Spanish"),
            _G("children's picture book:0.7|board book:0.5|activity book:0.5|coloring book:0.5|"
               "early reader:0.5|workbook:0.6",
               book_format="paperback|hardcover|board book edition", pages="24 pages|32 pages|48 pages|"
               "64 pages|96 pages", age_range="ages 0+|ages 3+|ages 5+|ages 8+", language="English|Spanish|"
               "bilingual English-Spanish"),
        ),
    ),
    CategorySpec(
        "Office Products", 12.0, 0.8,
        _split("Deskline|Paperworks Co|Inkstone|Folio & Co|Brightdesk|Scribewell|Ledger Lane|Officely|"
               "Papermill Goods|Stacks & Co|Tallyhall|Notable Supply"),
        _split(STYLES_GENERAL),
        (
            _G("gel pens:0.8|ballpoint pens:0.6|fineliner pens:0.8|rollerball pens:0.8|fountain pens:1.5",
               pack_size="4-pack|8-pack|12-pack|24-pack|36-pack", tip="0.5 mm|0.7 mm|1.0 mm",
               ink="black ink|blue ink|assorted colour ink", feature="a quick-dry formula|a rubber grip|"
               "a clip cap"),
            _G("highlighters:0.6|dry-erase markers:0.8|permanent markers:0.7|paint markers:0.9",
               pack_size="4-pack|8-pack|12-pack|24-pack", tip="fine|chisel|bullet",
               ink="black ink|assorted colour ink", feature="a quick-dry formula|low-odour ink|a clip cap"),
            _G("spiral notebook:0.5|composition notebook:0.4|legal pads:0.7|sticky notes:0.5|index cards:0.4|"
               "weekly planner:1.4|hardcover journal:1.2|printer paper:1.2",
               ruling="college-ruled|wide-ruled|dot grid|blank|graph",
               sheets="80 sheets|100 sheets|200 sheets|500 sheets", material="recycled paper|acid-free paper|"
               "FSC-certified paper"),
            _G("desk organizer|stapler:0.8|tape dispenser:0.6|paper tray:0.8|monitor stand:2|"
               "file folder set:0.6|desk lamp:2.2|whiteboard:2|bulletin board:1.6|label maker:2.5",
               variants="colour", p=0.3, colours=_split("black|white|silver|rose gold|navy"),
               material="steel mesh|bamboo|ABS plastic|acrylic|aluminum",
               feature="non-slip feet|a compact footprint|a lifetime warranty", colour_family=COLOUR_FAMILY),
            _G("office chair:12|task chair:9|drafting stool:8|gaming chair:14|kneeling chair:8",
               variants="colour", p=0.4, colours=_split("black|grey|navy|white"),
               material="breathable mesh|bonded leather|fabric upholstery|vegan leather",
               feature="lumbar support|adjustable armrests|a tilt lock|a headrest|a 300 lb weight rating"),
            _G("standing desk converter:10|filing cabinet:9|bookshelf:8|printer stand:4|desk mat:1.5|"
               "footrest:2.5",
               material="engineered wood|powder-coated steel|bamboo|vegan leather",
               feature="adjustable height|cable management|lockable drawers|non-slip feet",
               colour_family=COLOUR_FAMILY),
        ),
    ),
    CategorySpec(
        "Pet Supplies", 18.0, 0.8,
        _split("Happy Paws|Tail & Whisker|Barkwell|Purrfect Pantry|Furrow & Field|Good Boy Co|Whisker Works|"
               "Pawsome Goods|Kibble Creek|Meadow Pet|Wagtail|Snout & Co"),
        _split("Classic|Everyday|Original|Premium|Select|Natural|Essential"),
        (
            _G("dry dog food:2.2|dry cat food:1.8|puppy food:2.2|kitten food:1.8",
               protein="chicken|salmon|beef|turkey|lamb|duck",
               diet="grain-free|limited ingredient|high-protein|whole grain",
               pack_size="3 lb bag|5 lb bag|12 lb bag|24 lb bag"),
            _G("wet dog food:1.4|wet cat food:1.2|dog treats:0.6|cat treats:0.5|dental chews:0.9|"
               "freeze-dried treats:0.9|jerky treats:0.8",
               protein="chicken|salmon|beef|turkey|lamb|duck|tuna",
               diet="grain-free|limited ingredient|high-protein|no artificial colours",
               pack_size="3 oz pouch|6 oz bag|12-can pack|24-can pack|30-count bag"),
            _G("dog collar:0.6|dog leash:0.7|dog harness:1.1|reflective leash:0.8|training lead:0.8",
               variants="colour", p=0.6, colours=_split(GEAR_COLOURS),
               material="nylon webbing|leather|biothane|recycled polyester",
               pet_size="small|medium|large|extra-large", feature="a reflective stitch|a quick-release buckle|"
               "a padded handle|a D-ring for ID tags"),
            _G("pet bed:2|crate cover:1.4|pet blanket:0.8|pet carrier:2|car seat cover for pets:1.5",
               material="recycled polyester|plush fabric|memory foam|quilted cotton",
               feature="a non-slip base|a removable cover|a washable design", colour_family=COLOUR_FAMILY),
            _G("cat tree:3.5|scratching post:1.3|cat scratcher:0.7|wall-mounted cat shelf:1.5",
               material="sisal rope|corrugated cardboard|carpet-covered wood",
               feature="a non-slip base|replaceable pads|a dangling toy"),
            _G("food bowl set:0.6|water fountain:1.4|travel bowl:0.4|slow feeder bowl:0.6|automatic feeder:2.5",
               material="stainless steel|BPA-free plastic|ceramic",
               feature="a non-slip base|dishwasher-safe parts|a spill-resistant rim"),
            _G("chew toy:0.5|rope toy:0.4|squeaky plush toy:0.4|cat wand toy:0.3|catnip mice:0.3|"
               "puzzle feeder:0.8|fetch ball set:0.4",
               material="natural rubber|cotton rope|plush fabric|felt|recycled plastic",
               pet_size="small|medium|large", feature="a squeaker|a treat pocket|"
               "a floating design|a crinkle layer"),
        ),
    ),
    CategorySpec(
        "Baby", 20.0, 0.9,
        _split("Little Sprout|Cradle & Co|Bitty Bloom|Tiny Acorn|Lullaby Lane|Nestling|Peapod Baby|"
               "Honeybee Baby|Snuggle Bee|Wee Wonders|Bramble Baby|Pebble & Pip"),
        _split("Classic|Everyday|Gentle|Original|Essential|Cozy|Little"),
        (
            _G("baby bottle set:1.1|sippy cup:0.5|silicone bib set:0.6|baby spoon set:0.4|suction plate:0.5|"
               "snack cup:0.4",
               variants="colour", p=0.3, colours=_split("sage green|blush|oatmeal|sky blue|mustard"),
               material="BPA-free plastic|food-grade silicone|glass|stainless steel",
               feature="dishwasher-safe parts|a travel case|a storage pouch",
               age_range="ages 0+|ages 6 months+|ages 12 months+"),
            _G("high chair:6|stroller:12|car seat:10|baby carrier:5|play yard:6|bouncer:4|baby swing:7|"
               "travel system:18",
               weight_limit="up to 25 lb|up to 35 lb|up to 50 lb|up to 65 lb",
               feature="a five-point harness|a one-hand fold|machine-washable fabrics|a sun canopy|"
               "a storage basket"),
            _G("diapers:1.7|training pants:1.6|swim diapers:0.9|overnight diapers:1.8",
               diaper_size="newborn size|size 1|size 2|size 3|size 4|size 5",
               pack_size="24-count pack|44-count pack|84-count box|132-count box",
               feature="a wetness indicator|a fragrance-free design|a stretchy waistband"),
            _G("baby wipes:0.8|diaper cream:0.6|baby wash:0.6|baby lotion:0.6",
               formula="fragrance-free|water-based|aloe-infused|hypoallergenic",
               pack_size="72-count pack|216-count box|4 oz tube|12 fl oz bottle"),
            _G("swaddle blanket:1|sleep sack:1.4|crib sheet:0.9|burp cloth set:0.7|muslin blanket:0.9|"
               "onesie set:1.1",
               variants="colour", p=0.3, colours=_split("sage green|blush|oatmeal|sky blue|cream|grey"),
               material="organic cotton|bamboo viscose|muslin cotton|cotton jersey",
               pattern="solid|star print|striped|floral print|animal print"),
        ),
    ),
    CategorySpec(
        "Patio & Garden", 28.0, 0.9,
        _split("Greenthumb Co|Fernwood Garden|Terra Verde|Potting Shed Co|Sunbloom|Birch & Bough|Rootwell|"
               "Meadowlark Garden|Trellis & Vine|Hedgerow|Gardenia Works|Willowbrook"),
        _split("Classic|Pro|Heritage|Garden|Essential|Everyday|Heavy-Duty"),
        (
            _G("pruning shears:0.7|garden trowel:0.4|hand rake:0.4|loppers:1.2|hedge shears:1.1|garden hoe:0.8|"
               "hand weeder:0.4|garden fork:1",
               material="stainless steel|carbon steel|forged aluminum|high-carbon steel",
               handle="ash wood|fiberglass|rubber-grip|beech wood",
               feature="a locking mechanism|a hanging hole|a depth gauge|a lifetime warranty"),
            _G("garden hose:1.2|soaker hose:0.8|expandable hose:1|drip irrigation kit:1.2",
               length="25 ft|50 ft|75 ft|100 ft", material="rubber|vinyl|polyurethane|hybrid polymer",
               feature="brass fittings|a kink-free design|a storage bag"),
            _G("watering can:0.7|hose nozzle:0.5|oscillating sprinkler:0.8|hose reel:2|rain barrel:3",
               material="galvanized steel|recycled plastic|zinc alloy|powder-coated steel",
               feature="a weatherproof build|a brass connector|an adjustable spray pattern"),
            _G("patio chair cushion:1.2|outdoor rug:2.5|outdoor throw pillow:0.9|garden kneeler:0.7",
               variants="colour", p=0.4, colours=_split(HOME_COLOURS),
               material="olefin fabric|recycled PET|solution-dyed acrylic",
               feature="weather-resistant construction|a UV-resistant coating|a removable cover",
               colour_family=COLOUR_FAMILY),
            _G("planter:0.9|raised garden bed:3|bird feeder:0.8|fire pit:5|garden bench:4|plant stand:1.1",
               material="terracotta|cedar|powder-coated steel|resin wicker|recycled plastic",
               feature="weather-resistant construction|drainage holes|a UV-resistant coating",
               colour_family=COLOUR_FAMILY),
            _G("potting mix:0.6|raised bed soil:0.7|seed starting mix:0.5|compost:0.6|mulch:0.5",
               pack_size="8 qt bag|16 qt bag|1 cu ft bag|2 cu ft bag",
               formula="organic|peat-free|slow-release fertilizer"),
            _G("tomato seeds:0.2|herb seed kit:0.6|wildflower seed mix:0.3|lettuce seeds:0.2|pepper seeds:0.2|"
               "sunflower seeds for planting:0.2",
               pack_size="single packet|5-packet set|100-seed packet", diet="organic|non-GMO|heirloom"),
        ),
    ),
    CategorySpec(
        "Pantry & Dry Goods", 4.5, 0.45,
        _split("Harvest Lane|Golden Acre|Stoneground Mills|Prairie Table|Good Grain Co|Olive & Ash|"
               "Pantry Pride|Sunfield|Homestyle Kitchen|Riverbend Farms|Market Basket|True North Foods"),
        _split("Classic|Simple|Everyday|Kitchen|Original|Select|Homestyle"),
        (
            _G("spaghetti:0.7|penne pasta:0.7|elbow macaroni:0.6|fusilli:0.7|jasmine rice:1.2|"
               "basmati rice:1.3|brown rice|rolled oats|quinoa:1.5|couscous|lentils:0.9",
               diet="organic|gluten-free|non-GMO|whole grain",
               pack_size="1 lb bag|2 lb bag|16 oz box|32 oz bag|5 lb bag"),
            _G("black beans:0.5|chickpeas:0.5|kidney beans:0.5|diced tomatoes:0.5|tomato sauce:0.5|"
               "marinara sauce:1.2|vegetable broth:0.8|coconut milk:0.7",
               diet="organic|low-sodium|no salt added|vegan|non-GMO",
               pack_size="15 oz can|28 oz can|24 oz jar|32 fl oz carton|4-can pack"),
            _G("chicken broth:0.8|bone broth:1.2|canned tuna:0.6|canned salmon:1|sardines:0.8",
               diet="low-sodium|organic|gluten-free", pack_size="5 oz can|32 fl oz carton|4-can pack"),
            _G("all-purpose flour:1.1|bread flour:1.2|whole wheat flour:1.1|almond flour:2",
               diet="organic|non-GMO|unbleached|stone-ground", pack_size="2 lb bag|4 lb bag|5 lb bag"),
            _G("cane sugar|brown sugar|cocoa powder:1.3|baking powder:0.7|baking soda:0.5",
               diet="organic|non-GMO|fair trade|gluten-free", pack_size="8 oz canister|1 lb box|2 lb bag|4 lb bag"),
            _G("extra virgin olive oil:2|avocado oil:2|apple cider vinegar:0.8|soy sauce:0.7|hot sauce:0.7|"
               "balsamic vinegar:1.1",
               diet="organic|non-GMO|gluten-free|kosher", pack_size="8 fl oz bottle|16.9 fl oz bottle|"
               "32 fl oz bottle"),
            _G("ketchup:0.7|yellow mustard:0.5|honey:1.5|maple syrup:2|salsa:0.8|peanut butter|"
               "strawberry jam:0.9",
               diet="organic|non-GMO|no sugar added|gluten-free", pack_size="12 oz jar|16 oz jar|20 oz bottle|"
               "32 oz bottle"),
            _G("black pepper:0.9|sea salt:0.5|garlic powder:0.7|ground cinnamon:0.8|smoked paprika:0.8|"
               "Italian seasoning:0.7|chili powder:0.7|ground cumin:0.8",
               diet="organic|non-GMO|non-irradiated|kosher", pack_size="2 oz jar|4 oz jar|8 oz bag|16 oz tub"),
        ),
        variants=None,
    ),
    CategorySpec(
        "Dairy, Eggs & Alternatives", 4.0, 0.4,
        _split("Clover Hill|Sunny Creek Dairy|Pasture Prime|Green Valley Farms|Oatfield|Alpine Brook|"
               "Happy Hen Farms|Silver Birch Creamery|Nutgrove|Maple Hollow Dairy|Brookside Creamery|Plantwise"),
        _split("Classic|Farmhouse|Simple|Original|Everyday|Country|Fresh"),
        (
            _G("whole milk|2% milk|skim milk|lactose-free milk:1.2|half and half:0.8|heavy cream:1|"
               "buttermilk:0.8|chocolate milk",
               diet="organic|grass-fed|ultra-pasteurized|rBST-free",
               pack_size="pint bottle|quart carton|half-gallon carton|1 gallon jug"),
            _G("almond milk|oat milk|soy milk|coconut milk beverage|cashew milk|pea protein milk:1.1|"
               "oat creamer:0.9|almond creamer:0.9",
               flavour="original|unsweetened|vanilla|unsweetened vanilla|chocolate",
               diet="organic|non-GMO|vegan|dairy-free", pack_size="32 fl oz carton|half-gallon carton|"
               "48 fl oz bottle"),
            _G("cheddar cheese:1.1|mozzarella|swiss cheese:1.2|pepper jack:1.1|colby jack|provolone|gouda:1.3",
               form="sliced|shredded|in a block", diet="organic|grass-fed|rBST-free",
               pack_size="8 oz pack|16 oz pack|2 lb pack"),
            _G("feta:1.1|goat cheese:1.3|cream cheese:0.8|cottage cheese:0.9|ricotta|brie:1.5|sour cream:0.7",
               diet="organic|grass-fed|rBST-free|reduced-fat", pack_size="4 oz pack|8 oz tub|16 oz tub"),
            _G("large eggs|extra-large eggs:1.1|jumbo eggs:1.2|brown eggs:1.1|medium eggs:0.9",
               diet="cage-free|pasture-raised|organic|free-range",
               pack_size="6-count carton|12-count carton|18-count carton|24-count pack"),
            _G("Greek yogurt|whole milk yogurt|skyr:1.2|kefir:1.1|drinkable yogurt",
               flavour="plain|vanilla|strawberry|blueberry|honey|peach",
               diet="organic|high-protein|low-fat|nonfat", pack_size="5.3 oz cup|4-cup pack|32 oz tub"),
            _G("salted butter:1.2|unsalted butter:1.2|cultured butter:1.4|European-style butter:1.5",
               diet="grass-fed|organic|rBST-free", pack_size="8 oz pack|16 oz pack|4-stick pack"),
            _G("plant-based butter:1.2|oat yogurt|almond yogurt|coconut yogurt|vegan cheese shreds:1.2|"
               "cashew cream cheese:1.3",
               diet="vegan|dairy-free|organic|soy-free", pack_size="5.3 oz cup|8 oz pack|16 oz tub"),
        ),
    ),
    CategorySpec(
        "Snacks & Beverages", 4.5, 0.45,
        _split("Crunch Theory|Trailside Snacks|Sunny Bite|Kettle Creek|Bubble & Brew|Roastworks|Orchard Fresh|"
               "Peak Sip|Munch Mill|Salt & Crisp|Brewhouse Coffee Co|Zest Beverage Co"),
        _split("Classic|Original|Simple|Everyday|Select|Craft|Homestyle"),
        (
            _G("potato chips|kettle chips|tortilla chips|pretzels:0.9|popcorn:0.9|crackers|pita chips|"
               "rice cakes:0.8|veggie straws",
               flavour="sea salt|barbecue|sour cream & onion|white cheddar|jalapeño|lightly salted",
               diet="gluten-free|non-GMO|organic|baked", pack_size="7 oz bag|10 oz bag|12-bag multipack|"
               "family-size bag"),
            _G("granola bars|protein bars:1.5|nut bars:1.2|oat bars|snack bars:0.9",
               flavour="chocolate chip|peanut butter|almond|honey oat|dark chocolate sea salt",
               diet="gluten-free|non-GMO|high-protein|organic", pack_size="6-bar box|12-bar box|24-bar box"),
            _G("gummy bears:0.8|fruit snacks:0.8|sour gummy worms:0.8|chewy candy:0.8",
               flavour="assorted fruit|sour|tropical|berry", diet="vegan|gluten-free|no artificial colours",
               pack_size="5 oz bag|10-pouch box|28 oz bag"),
            _G("mixed nuts:1.8|roasted almonds:1.6|cashews:1.8|pistachios:1.8|trail mix:1.3|"
               "sunflower seeds:0.8",
               flavour="lightly salted|unsalted|honey roasted|sea salt", diet="non-GMO|keto-friendly|organic",
               pack_size="8 oz bag|16 oz jar|30 oz canister"),
            _G("dark chocolate bar:0.8|milk chocolate bar:0.7|chocolate chip cookies:0.9|sandwich cookies:0.8|"
               "shortbread cookies",
               flavour="sea salt|almond|mint|caramel|classic", diet="fair trade|organic|non-GMO",
               pack_size="3.5 oz bar|7 oz pack|13 oz pack"),
            _G("ground coffee:2|whole bean coffee:2.2|instant coffee:1.6|espresso ground coffee:2.1",
               roast="light|medium|dark", origin="Colombia|Ethiopia|Guatemala|Sumatra|Brazil",
               diet="organic|fair trade|decaf", pack_size="12 oz bag|24 oz bag|2 lb bag"),
            _G("green tea:0.9|black tea:0.9|chamomile tea:0.9|peppermint tea:0.9|chai tea|earl grey tea:0.9",
               diet="organic|fair trade|decaf|caffeine-free", pack_size="20-bag box|40-bag box|100-bag box"),
            _G("orange juice|apple juice|cranberry juice|grape juice|pineapple juice",
               diet="100% juice|not from concentrate|organic|no sugar added",
               pack_size="52 fl oz bottle|64 fl oz bottle|6-pack of 10 fl oz bottles"),
            _G("sparkling water:0.9|kombucha|sports drink:0.8|iced tea:0.8|lemonade:0.8|energy drink|"
               "coconut water",
               flavour="lime|grapefruit|berry|peach|ginger|mango|original",
               diet="zero sugar|organic|caffeine-free|low-calorie",
               pack_size="12-can pack|8-can pack|16 fl oz bottle|6-bottle pack"),
        ),
    ),
)
# fmt: on
_BY_NAME: dict[str, CategorySpec] = {c.name: c for c in SPECS}
_missing = {k for c in SPECS for g in c.groups for k, _ in g.facets} - set(CLAUSES)
assert not _missing, f"facts without a description clause: {sorted(_missing)}"
for _c in SPECS:
    _types = [t for g in _c.groups for t, _ in g.types]
    assert len(set(_types)) == len(_types), f"{_c.name}: a product type is listed twice"
    assert all(len(g.facets) >= 2 for g in _c.groups), f"{_c.name}: every group needs >= 2 fact keys"
assert tuple(_BY_NAME) == CATEGORIES, "category specs must follow CATEGORY_SHARES order"


def product_types(category: str) -> list[str]:
    """The product types (``attributes["type"]`` values) a category of the control catalog uses."""
    return [t for g in _BY_NAME[category].groups for t, _ in g.types]
